package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// query is one "-- name: X :kind" section of a .sql file.
type query struct {
	Name string
	Kind string // ":one", ":many" or ":exec"
	File string // the file's base name, e.g. audit.sql
	SQL  string
	// Params is the "-- params: a, b" annotation, nil when absent.
	Params []string
}

var (
	headerRE = regexp.MustCompile(`^--\s*name:\s*([A-Za-z0-9_]+)\s*(:[a-z]+)?\s*$`)
	paramsRE = regexp.MustCompile(`^\s*--\s*params:\s*(.*)$`)
)

// readQueries reads every .sql file in dir, split at sqlc-style headers as
// store.LoadQueries splits them, keeping each query's kind and annotations.
func readQueries(dir string) (map[string]*query, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .sql files in %s", dir)
	}
	sort.Strings(files)
	qs := map[string]*query{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		var cur *query
		var body strings.Builder
		flush := func() error {
			if cur == nil {
				return nil
			}
			cur.SQL = strings.TrimSpace(body.String())
			body.Reset()
			if _, dup := qs[cur.Name]; dup {
				return fmt.Errorf("%s: query %s defined twice", f, cur.Name)
			}
			qs[cur.Name] = cur
			return nil
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m := headerRE.FindStringSubmatch(line); m != nil {
				if err := flush(); err != nil {
					fh.Close()
					return nil, err
				}
				kind := m[2]
				switch kind {
				case ":one", ":many", ":exec":
				default:
					fh.Close()
					return nil, fmt.Errorf("%s: query %s: kind %q is not :one, :many or :exec", f, m[1], kind)
				}
				cur = &query{Name: m[1], Kind: kind, File: filepath.Base(f)}
				continue
			}
			if cur == nil {
				continue
			}
			if m := paramsRE.FindStringSubmatch(line); m != nil {
				for _, p := range strings.Split(m[1], ",") {
					cur.Params = append(cur.Params, strings.TrimSpace(p))
				}
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		err = sc.Err()
		fh.Close()
		if err != nil {
			return nil, err
		}
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return qs, nil
}
