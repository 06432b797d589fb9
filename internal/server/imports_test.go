package server

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/stewardhq/steward/"

// allowedImports is the dependency graph between Steward's own packages
// (STYLE §1). Adding an edge is a reviewed change: a domain that needs
// another goes through an interface it declares, wired here in server.
// internal/server and cmd/ may import anything.
var allowedImports = map[string][]string{
	"api":                      nil,
	"internal/auth":            nil,
	"internal/background":      nil,
	"internal/bench":           nil,
	"internal/buildinfo":       nil,
	"internal/egress":          nil,
	"internal/invalid":         nil,
	"internal/keylock":         nil,
	"internal/poll":            nil,
	"internal/logtest":         nil,
	"internal/schema":          {"internal/invalid"},
	"internal/resourceid":      {"internal/invalid"},
	"internal/limits":          {"internal/invalid"},
	"internal/statemachine":    {"internal/invalid", "internal/order"}, // its operations move order.Attributes
	"internal/status":          nil,
	"internal/store":           nil,
	"internal/store/storetest": {"internal/store"},
	// A build tool (go generate), not linked into the binary.
	"internal/store/querygen":  {"internal/store"},
	"internal/order":           {"internal/store"}, // the orders' reads: each domain reaches orders by this import
	"internal/jobs":            {"internal/store"},
	"internal/reconcile":       {"internal/background", "internal/store"},
	"internal/peers":           {"internal/background", "internal/store"},
	"internal/events":          {"internal/background", "internal/store"},
	"internal/httpapi":         {"internal/auth", "internal/invalid", "internal/store"},
	"internal/httpapi/apitest": {"internal/server", "internal/store", "internal/store/storetest"},
	"internal/operations":      {"internal/auth", "internal/httpapi", "internal/store"},
	"internal/adapterstatus":   {"internal/auth", "internal/httpapi", "internal/invalid", "internal/order", "internal/store"},
	// The audit log sits below the domains: they refine their requests'
	// records (audit.Describe) and the HTTP layer writes them.
	"internal/audit":  {"internal/auth", "internal/httpapi", "internal/invalid", "internal/store"},
	"internal/tokens": {"internal/audit", "internal/auth", "internal/httpapi", "internal/invalid", "internal/store"},
	// Not internal/crashtest: the harness is cmd/steward-crash, outside the
	// product binary (issue 47).
	"internal/cli": {"internal/adapter", "internal/bench", "internal/buildinfo", "internal/ctl",
		"internal/kubeprovider", "internal/pgprovider", "internal/processprovider", "internal/providerhost", "internal/sentinel",
		"internal/server"},
	// The client commands talk to a server through pkg/client only; api
	// gives them the request schemas apply filters members by.
	"internal/ctl":       {"api", "internal/buildinfo", "pkg/client"},
	"internal/crashtest": {"pkg/provider"},
	"internal/catalog": {"internal/audit", "internal/httpapi", "internal/invalid", "internal/order", "internal/resourceid",
		"internal/schema", "internal/statemachine", "internal/store"},
	// The SPRM and placement record what happens to orders' resources as
	// reconcile changes (status flows one way, DESIGN §2).
	"internal/placement": {"internal/auth", "internal/httpapi", "internal/invalid", "internal/operations",
		"internal/policy", "internal/reconcile", "internal/resourceid", "internal/sprm", "internal/store", "pkg/provider"},
	"internal/sprm": {"internal/audit", "internal/auth", "internal/egress", "internal/events", "internal/httpapi", "internal/invalid", "internal/limits",
		"internal/reconcile", "internal/resourceid", "internal/store", "pkg/provider"},
	"internal/repair": {"internal/audit", "internal/auth", "internal/httpapi", "internal/invalid", "internal/order",
		"internal/store", "pkg/provider"},
	// Credentials are asked of the provider that holds an order's instance
	// (the registry says where and with which call token); a rotation is
	// an Operation.
	// The console calls the API in process, over HTTP: it imports no
	// domain.
	"internal/console": {"internal/live"},
	"internal/live":    {},
	"internal/credentials": {"internal/auth", "internal/httpapi", "internal/operations", "internal/sprm", "internal/store",
		"pkg/provider"},
	// The sentinel decides about orders from their adapters' reports and
	// publishes through the outbox.
	"internal/sentinel": {"internal/adapterstatus", "internal/background", "internal/events", "internal/order", "internal/store"},
	// The adapter runtime talks to Steward over HTTP only, like any adapter.
	"internal/adapter":         {"internal/events"},
	"internal/kubeprovider":    {"internal/invalid", "internal/keylock", "internal/providerhost", "pkg/provider"},
	"internal/kubetest":        nil,
	"internal/processprovider": {"internal/invalid", "internal/providerhost", "pkg/provider"},
	// A provider like any other: pkg/provider and its own PostgreSQL.
	"internal/pgprovider":   {"internal/background", "internal/keylock", "internal/providerhost", "pkg/provider"},
	"internal/providerhost": {"internal/background", "pkg/provider"},
	// The SDK calls Steward (registration, status reports) through the
	// typed client.
	"pkg/provider":              {"pkg/client"},
	"pkg/client":                nil,
	"pkg/provider/providertest": {"pkg/provider"},
	"internal/policy": {"internal/audit", "internal/auth", "internal/background", "internal/httpapi", "internal/invalid", "internal/limits",
		"internal/resourceid", "internal/store"},
	// The lifecycle owns the order at the top of the domains (DESIGN §2).
	"internal/lifecycle": {"internal/adapterstatus", "internal/audit", "internal/auth", "internal/catalog", "internal/httpapi", "internal/invalid", "internal/limits",
		"internal/operations", "internal/order", "internal/placement", "internal/policy", "internal/reconcile",
		"internal/resourceid", "internal/schema", "internal/statemachine", "internal/status", "internal/store", "pkg/provider"},
}

// testOnly packages may never be imported by production code: only _test.go
// files and other testOnly packages (apitest uses storetest) may import them.
var testOnly = []string{"internal/store/storetest", "internal/httpapi/apitest", "pkg/provider/providertest",
	"internal/poll", "internal/logtest", "internal/kubetest", "internal/crashtest"}

func TestImports_FollowTheAllowedGraph(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && path == filepath.Join(root, "tools") {
			return filepath.SkipDir // its own module, for test binaries (tools/kube)
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if pkg == "internal/server" || strings.HasPrefix(pkg, "cmd/") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		allowed, known := allowedImports[pkg]
		if !known {
			t.Errorf("%s: package not in allowedImports; add it with its edges", pkg)
			return nil
		}
		for _, imp := range f.Imports {
			target, ok := strings.CutPrefix(strings.Trim(imp.Path.Value, `"`), module)
			if !ok {
				continue
			}
			if !slices.Contains(allowed, target) {
				t.Errorf("%s imports %s, which allowedImports does not allow", path, target)
			}
			if slices.Contains(testOnly, target) && !slices.Contains(testOnly, pkg) {
				t.Errorf("%s: production code imports the test package %s", path, target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Issue 47: the product binary links no harness. The check above reads
// source and lets cmd/ import anything; this one asks the go tool what
// ./cmd/steward really links, so a harness reached through any path fails.
// Only Steward's own packages: some libraries link test helpers of their
// own (River's testsignal, client-go's testing via gentype, OpenTelemetry's
// tracetest via stdouttrace), which is theirs to fix.
func TestImports_ProductBinaryLinksNoHarness(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-deps", "./cmd/steward")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/steward: %v\n%s", err, stderr.Bytes())
	}
	notLinked := append(slices.Clone(testOnly), "internal/store/querygen", "cmd/steward-crash")
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"internal/server") {
		t.Fatalf("go list -deps ./cmd/steward does not list internal/server; the output is not what this test expects:\n%s", out)
	}
	for _, dep := range deps {
		pkg, ours := strings.CutPrefix(dep, module)
		if !ours {
			continue
		}
		if slices.Contains(notLinked, pkg) || strings.HasSuffix(pkg, "test") || strings.Contains(pkg, "_test") {
			t.Errorf("./cmd/steward links %s, a test harness or build tool (see `go list -deps ./cmd/steward`)", pkg)
		}
	}
}
