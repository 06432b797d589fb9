package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/stewardhq/steward/internal/cli"
	"github.com/stewardhq/steward/internal/crashtest"
)

// readRepoFile reads a file of the repository by its path from the root.
func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	moduleDir, err := crashtest.ModuleDir(context.Background(), ".")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(moduleDir, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Issue 22, item 17: every route line of docs/api.md ("    GET /api/v1/…")
// is an operation of api/openapi.yaml with that method, and every operation
// of the document is in the guide, so the guide can drift neither way.
func TestDocs_APIGuideRoutesAreInTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "api/openapi.yaml")), &doc); err != nil {
		t.Fatal(err)
	}
	methods := []string{"get", "post", "put", "patch", "delete"}
	inDocument := map[string]bool{}
	for path, ops := range doc.Paths {
		for m := range ops {
			if slices.Contains(methods, m) {
				inDocument[strings.ToUpper(m)+" "+path] = true
			}
		}
	}

	route := regexp.MustCompile(`(?m)^ {4}(GET|POST|PUT|PATCH|DELETE) (/api/\S+)\s*$`)
	inGuide := map[string]bool{}
	for _, m := range route.FindAllStringSubmatch(readRepoFile(t, "docs/api.md"), -1) {
		r := m[1] + " " + m[2]
		inGuide[r] = true
		if !inDocument[r] {
			t.Errorf("docs/api.md names %s, which api/openapi.yaml does not have", r)
		}
	}
	if len(inGuide) < 20 {
		t.Fatalf("found %d route lines in docs/api.md; the pattern no longer matches it", len(inGuide))
	}
	for r := range inDocument {
		if !inGuide[r] {
			t.Errorf("api/openapi.yaml has %s, which docs/api.md does not list", r)
		}
	}
}

// Issue 22, item 17: docs/operations.md names every flag of steward server.
func TestDocs_OperationsGuideNamesEveryFlag(t *testing.T) {
	t.Parallel()
	guide := readRepoFile(t, "docs/operations.md")
	// The processes an operator runs; their flags are the guide's tables and
	// paragraphs (a flag added to one of them must be documented).
	for _, command := range [][]string{
		{"server"}, {"provider", "process"}, {"provider", "postgres"}, {"sentinel"}, {"adapter"}, {"token", "create"},
	} {
		var out, errOut bytes.Buffer
		args := append(slices.Clone(command), "--help")
		if code := cli.MainContext(t.Context(), args, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("steward %s: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
		}
		flags := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9-]+)`).FindAllStringSubmatch(out.String(), -1)
		if len(flags) < 5 {
			t.Fatalf("found %d flags in steward %s:\n%s", len(flags), strings.Join(args, " "), out.String())
		}
		for _, f := range flags {
			if f[1] != "help" && !strings.Contains(guide, "`--"+f[1]+"`") {
				t.Errorf("docs/operations.md does not name `--%s` of steward %s", f[1], strings.Join(command, " "))
			}
		}
	}
}

// Issue 22, item 17: the README links the repository's own guides, and
// nothing points outside the clone.
func TestDocs_ReadmeLinksTheGuidesAndNothingOutside(t *testing.T) {
	t.Parallel()
	readme := readRepoFile(t, "README.md")
	for _, d := range []string{"docs/architecture.md", "docs/api.md", "docs/operations.md", "docs/providers.md"} {
		if !strings.Contains(readme, "("+d+")") {
			t.Errorf("README.md does not link %s", d)
		}
	}
	for _, f := range []string{"README.md", "docs/architecture.md", "docs/api.md", "docs/operations.md", "docs/providers.md"} {
		if text := readRepoFile(t, f); strings.Contains(text, "../shared") || strings.Contains(text, "shared folder") {
			t.Errorf("%s points outside the repository (../shared)", f)
		}
	}
}

// Issue 23: the domain table of docs/architecture.md has a row for every
// package of the module (what `go list ./...` lists), so a new package
// cannot go unexplained.
func TestDocs_ArchitectureTableListsEveryPackage(t *testing.T) {
	t.Parallel()
	moduleDir, err := crashtest.ModuleDir(context.Background(), ".")
	if err != nil {
		t.Fatal(err)
	}
	table := readRepoFile(t, "docs/architecture.md")
	packages := map[string]bool{}
	err = filepath.WalkDir(moduleDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != moduleDir {
			_, nested := os.Stat(filepath.Join(path, "go.mod"))
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || nested == nil {
				return filepath.SkipDir // not this module's packages
			}
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			rel, err := filepath.Rel(moduleDir, filepath.Dir(path))
			if err != nil {
				return err
			}
			packages[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(packages) < 30 {
		t.Fatalf("found %d packages, want the module's (%v)", len(packages), packages)
	}
	for pkg := range packages {
		if !strings.Contains(table, "| `"+pkg+"` |") {
			t.Errorf("docs/architecture.md's domain table has no row for %s", pkg)
		}
	}
}
