package cli_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/api"
	"github.com/stewardhq/steward/internal/cli"
)

// fakeServer answers health as a server of version and API revision
// (0: the member absent, as servers before revision 1 answer) and every
// other route as an unknown one; it records the Steward-Project headers.
func fakeServer(t *testing.T, version string, revision int) (string, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var projects []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		projects = append(projects, r.Header.Get("Steward-Project"))
		mu.Unlock()
		if r.URL.Path == "/api/v1/health" {
			w.Header().Set("Content-Type", "application/json")
			rev := ""
			if revision > 0 {
				rev = fmt.Sprintf(`, "api_revision": %d`, revision)
			}
			fmt.Fprintf(w, `{"status": "ok", "version": %q, "checks": {}, "events_scope": "replica", "warnings": []%s}`, version, rev)
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"type": "about:blank", "title": "Not found", "status": 404, "reason": "NOT_FOUND", "detail": "no such route"}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(projects) }
}

func stewardAt(t *testing.T, server string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append([]string{"--config", t.TempDir() + "/config.yaml", "--server", server}, args...)
	code := cli.MainContext(t.Context(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// Issue 46, item 7: a client newer than its server says so: version warns,
// a route the server lacks is explained beside its 404, and get -A, which
// an older server would read as a project named "*" and answer with an
// empty list, is refused before it is sent.
func TestClient_SaysWhenTheServerIsOlder(t *testing.T) {
	t.Parallel()
	old, projects := fakeServer(t, "v0.9.0", 0)

	code, stdout, stderr := stewardAt(t, old, "version")
	if code != 0 || !strings.Contains(stdout, "Server: v0.9.0") ||
		!strings.Contains(stderr, fmt.Sprintf("warning: the server (version v0.9.0, API revision 0) is older than this client (API revision %d)", api.Revision)) {
		t.Errorf("version against an older server: exit %d\nstdout:\n%s\nstderr:\n%s\nwant its version and a warning", code, stdout, stderr)
	}
	code, _, stderr = stewardAt(t, old, "whoami")
	if code == 0 || !strings.Contains(stderr, "server: the server (version v0.9.0, API revision 0) is older than this client") {
		t.Errorf("whoami against an older server: exit %d, stderr:\n%s\nwant the 404 explained", code, stderr)
	}
	code, stdout, stderr = stewardAt(t, old, "get", "orders", "-A")
	if code == 0 || stdout != "" || !strings.Contains(stderr, "-A (every project's) needs a server of API revision 1") {
		t.Errorf("get -A against an older server: exit %d\nstdout:\n%s\nstderr:\n%s\nwant a refusal", code, stdout, stderr)
	}
	for _, p := range projects() {
		if p == "*" {
			t.Errorf("get -A sent Steward-Project: * to a server that reads it as a project")
		}
	}

	current, _ := fakeServer(t, "v1.0.0", api.Revision)
	if code, _, stderr := stewardAt(t, current, "version"); code != 0 || strings.Contains(stderr, "warning") {
		t.Errorf("version against a server of the client's revision: exit %d, stderr %q; want no warning", code, stderr)
	}
	newer, _ := fakeServer(t, "v2.0.0", api.Revision+1)
	if _, _, stderr := stewardAt(t, newer, "version"); !strings.Contains(stderr, "is newer than this client") {
		t.Errorf("version against a newer server: stderr %q; want a warning", stderr)
	}
}
