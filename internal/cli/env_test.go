package cli_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/cli"
	"github.com/stewardhq/steward/internal/poll"
)

// fakeSteward answers the calls a completion and a provider make, and
// records the bearer tokens of the registrations it takes.
type fakeSteward struct {
	*httptest.Server
	mu            sync.Mutex
	registrations []string // the Authorization header of each
}

func newFakeSteward(t *testing.T, token string) *fakeSteward {
	f := &fakeSteward{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/providers":
			f.mu.Lock()
			f.registrations = append(f.registrations, r.Header.Get("Authorization"))
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":"p-1","name":"process-sp"}`)
		case r.Header.Get("Authorization") != "Bearer "+token:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"status":401,"reason":"UNAUTHENTICATED","title":"Unauthenticated"}`)
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/catalog-item-instances":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"results":[{"id":"from-env","state":"up"}]}`)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// runProvider runs `steward args…` (a provider) in this process until it
// registered with f, then stops it and wants exit 0.
func (f *fakeSteward) runProvider(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	var errOut syncBuffer
	before := len(f.registeredWith())
	go func() { done <- cli.MainContext(ctx, args, strings.NewReader(""), io.Discard, &errOut) }()
	poll.Until(t, "the provider registered", func() bool {
		select {
		case code := <-done:
			t.Fatalf("steward %s: exit %d before registering\n%s", strings.Join(args, " "), code, errOut.String())
		default:
		}
		return len(f.registeredWith()) > before
	})
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("steward %s stopped: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
	}
}

func (f *fakeSteward) registeredWith() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.registrations...)
}

// Issue 46, item 5: a shell completes the ids of the server STEWARD_SERVER
// names, as STEWARD_TOKEN's caller, as a run of the command would.
func TestCompletion_ReadsStewardServerAndToken(t *testing.T) {
	steward := newFakeSteward(t, "env-token")
	t.Setenv("STEWARD_SERVER", steward.URL)
	t.Setenv("STEWARD_TOKEN", "env-token")
	t.Setenv("STEWARD_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	var out, errOut strings.Builder
	if code := cli.MainContext(t.Context(), []string{"__complete", "get", "orders", ""}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("__complete: exit %d\n%s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "from-env\tup\n") {
		t.Errorf("completion with STEWARD_SERVER and STEWARD_TOKEN offers no id of that server:\n%s", out.String())
	}
}

// Issue 46, item 5: a provider finds Steward at STEWARD_SERVER and calls
// it with STEWARD_TOKEN; a flag beats the environment, --token-file
// included (it used to clash with an exported STEWARD_TOKEN).
func TestProviderProcess_StewardServerAndTokenFromEnv(t *testing.T) {
	steward := newFakeSteward(t, "")
	run := func(args ...string) {
		t.Helper()
		steward.runProvider(t, append([]string{"provider", "process", "--listen", "127.0.0.1:0", "--work-dir", t.TempDir(), "--allow-root"},
			args...)...)
	}

	t.Setenv("STEWARD_SERVER", steward.URL)
	t.Setenv("STEWARD_TOKEN", "env-token")
	run()
	if got := steward.registeredWith(); got[len(got)-1] != "Bearer env-token" {
		t.Errorf("registered with %q, want STEWARD_TOKEN's", got[len(got)-1])
	}

	file := filepath.Join(t.TempDir(), "token")
	writeFile(t, file, "file-token\n")
	t.Setenv("STEWARD_SERVER", "http://127.0.0.1:1")
	run("--steward-url", steward.URL, "--token-file", file)
	if got := steward.registeredWith(); got[len(got)-1] != "Bearer file-token" {
		t.Errorf("registered with %q, want --token-file's", got[len(got)-1])
	}
}
