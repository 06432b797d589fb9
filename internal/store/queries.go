package store

import (
	"bufio"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Queries maps a query's name (its "-- name: X :kind" header) to its SQL.
type Queries map[string]string

var queryHeader = regexp.MustCompile(`^--\s*name:\s*([A-Za-z0-9_]+)\s*(:[a-z]+)?\s*$`)

// LoadQueries reads every .sql file in dir/<engine> of fsys and splits it at
// sqlc-style headers ("-- name: ProviderGetByName :one"). Domains call it once
// at construction with their embedded sql/ directory.
func LoadQueries(fsys fs.FS, dir string, engine Engine) (Queries, error) {
	root := path.Join(dir, string(engine))
	files, err := fs.Glob(fsys, root+"/*.sql")
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("store: no queries in %s", root)
	}
	qs := Queries{}
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		if err := qs.parse(f, string(b)); err != nil {
			return nil, err
		}
	}
	if engine == SQLite {
		for name, q := range qs {
			if bareLimit.MatchString(q) {
				return nil, fmt.Errorf("store: query %s in %s: write LIMIT CAST(? AS INTEGER), not LIMIT ?", name, root)
			}
		}
	}
	return qs, nil
}

// bareLimit finds a LIMIT bound to a bare parameter. SQLite reads such a
// limit's value while planning, so every new binding of the statement
// expires it and the next run parses and plans it again (a tenth of the
// CPU of listing 100 orders). A CAST keeps the plan independent of it.
var bareLimit = regexp.MustCompile(`(?i)\bLIMIT\s+\?`)

// MustLoadQueries is LoadQueries for embedded files, where an error is a
// programmer's mistake caught by the first test run.
func MustLoadQueries(fsys fs.FS, dir string, engine Engine) Queries {
	qs, err := LoadQueries(fsys, dir, engine)
	if err != nil {
		panic(err)
	}
	return qs
}

func (qs Queries) parse(file, text string) error {
	var name string
	var body strings.Builder
	flush := func() error {
		if name == "" {
			return nil
		}
		if _, dup := qs[name]; dup {
			return fmt.Errorf("store: query %s defined twice (%s)", name, file)
		}
		qs[name] = strings.TrimSpace(body.String())
		body.Reset()
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if m := queryHeader.FindStringSubmatch(line); m != nil {
			if err := flush(); err != nil {
				return err
			}
			name = m[1]
			continue
		}
		if name != "" {
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	return flush()
}

// Get returns the named query. A missing name is a programmer's mistake, so
// it panics; the parity test (every engine defines the same names) catches it.
func (qs Queries) Get(name string) string {
	q, ok := qs[name]
	if !ok {
		panic("store: no query named " + name)
	}
	return q
}

// Names lists the query names in order.
func (qs Queries) Names() []string {
	names := make([]string, 0, len(qs))
	for n := range qs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
