package server_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// queryReads are the query parameters a handler reads, found in its
// source: q.Get("x") on r.URL.Query(), httpapi.QueryFlag/QueryBool(r, "x"),
// httpapi.ParsePage (max_page_size, page_token) and labelFilter (label).
func queryReads(body *ast.BlockStmt) []string {
	var names []string
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		lit := func(i int) {
			if i < len(call.Args) {
				if b, ok := call.Args[i].(*ast.BasicLit); ok && b.Kind == token.STRING {
					s, _ := strconv.Unquote(b.Value)
					names = append(names, s)
				}
			}
		}
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			switch fn.Sel.Name {
			case "Get", "Has":
				if id, ok := fn.X.(*ast.Ident); ok && id.Name == "q" {
					lit(0)
				} else if c, ok := fn.X.(*ast.CallExpr); ok {
					if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Query" {
						lit(0)
					}
				}
			case "QueryFlag", "QueryBool":
				lit(1)
			case "ParsePage":
				names = append(names, "max_page_size", "page_token")
			}
		case *ast.Ident:
			if fn.Name == "labelFilter" {
				names = append(names, "label")
			}
		}
		return true
	})
	return names
}

// Issue 22, item 5: api/openapi.yaml is the one list of the query
// parameters each route takes (the server refuses any other), so every
// parameter a handler reads must be declared on its route, or the server
// would refuse what the handler wants.
func TestQuery_HandlersReadOnlyDeclaredParameters(t *testing.T) {
	t.Parallel()
	declared := map[string][]string{}
	for _, op := range documentedOperations(t) {
		declared[op.method+" "+op.path] = op.query
	}
	files, err := filepath.Glob("../*/http*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, dir := range uniqueDirs(files) {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			funcs := map[string]*ast.FuncDecl{}
			var routes [][2]string // pattern, handler
			for _, f := range pkg.Files {
				for _, d := range f.Decls {
					if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
						funcs[fd.Name.Name] = fd
					}
				}
				ast.Inspect(f, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok || len(call.Args) != 2 {
						return true
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandlePublic") {
						return true
					}
					pattern, ok := call.Args[0].(*ast.BasicLit)
					handler, ok2 := call.Args[1].(*ast.SelectorExpr)
					if ok && ok2 {
						p, _ := strconv.Unquote(pattern.Value)
						routes = append(routes, [2]string{p, handler.Sel.Name})
					}
					return true
				})
			}
			for _, rt := range routes {
				fd := funcs[rt[1]]
				if fd == nil {
					continue
				}
				checked++
				for _, name := range queryReads(fd.Body) {
					if !slices.Contains(declared[rt[0]], name) {
						t.Errorf("%s (%s.%s) reads ?%s, which api/openapi.yaml does not declare on the route",
							rt[0], pkg.Name, rt[1], name)
					}
				}
			}
		}
	}
	if checked < 40 {
		t.Fatalf("checked %d handlers; the domains register more", checked)
	}
}

func uniqueDirs(files []string) []string {
	var dirs []string
	for _, f := range files {
		if d := filepath.Dir(f); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}
