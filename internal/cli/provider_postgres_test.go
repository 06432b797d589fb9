package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 24: one `steward provider postgres` serves several servers given as
// --target, each registered as a provider of its own with its labels and
// its own API address.
func TestProviderPostgres_TargetsRegisterAsProvidersOfTheirOwn(t *testing.T) {
	t.Parallel()
	adminURL := os.Getenv(storetest.EnvDatabaseURL)
	if adminURL == "" {
		t.Skipf("%s is not set", storetest.EnvDatabaseURL)
	}
	bin := stewardBinary(t)
	var mu sync.Mutex
	registered := map[string]map[string]any{}
	steward := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/api/v1/providers" {
			var reg map[string]any
			b, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(b, &reg)
			mu.Lock()
			registered[reg["name"].(string)] = reg
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":"p-1"}`)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer steward.Close()
	dir := t.TempDir()
	urlFile := filepath.Join(dir, "admin-url")
	if err := os.WriteFile(urlFile, []byte(adminURL), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, _ := startServer(t, bin, "provider", "postgres", "--steward-url", steward.URL, "--secret-file", filepath.Join(dir, "key"),
		"--target", "name=pg-eu,admin-url-file="+urlFile+",label=region=eu,label=tier=gold",
		"--target", "name=pg-us,admin-url-file="+urlFile+",label=region=us")
	poll.Until(t, "both targets registered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(registered) == 2
	})
	stopServer(t, cmd)
	mu.Lock()
	defer mu.Unlock()
	eu, us := registered["pg-eu"], registered["pg-us"]
	if eu == nil || us == nil || eu["endpoint"] == us["endpoint"] {
		t.Fatalf("registrations %v, want pg-eu and pg-us at two endpoints", registered)
	}
	if m, _ := eu["metadata"].(map[string]any); m["region"] != "eu" || m["tier"] != "gold" {
		t.Errorf("pg-eu metadata %v, want region=eu, tier=gold", eu["metadata"])
	}
	if m, _ := us["metadata"].(map[string]any); m["region"] != "us" {
		t.Errorf("pg-us metadata %v, want region=us", us["metadata"])
	}

	// A target mixed with the one-server flags, or missing its URL, is
	// refused; an admin-url= given inline is not repeated in the error.
	for _, args := range [][]string{
		{"--target", "name=a,admin-url-file=" + urlFile, "--name", "b"},
		{"--target", "name=a"},
		{"--target", "name=a,admin-url-file=" + urlFile, "--advertise", "db.example:6432"},
		{"--target", "name=a,admin-url-file=" + urlFile + ",advertise=user@db"},
		{"--target", "name=a,admin-url=postgres://u:s3cret-pw@h/db,colour=red"},
	} {
		code, _, stderr := runSteward(t, bin, append([]string{"provider", "postgres", "--secret-file", filepath.Join(dir, "key")}, args...)...)
		if code == 0 || strings.Contains(stderr, "s3cret-pw") {
			t.Errorf("steward provider postgres %v: exit %d\n%s", args, code, stderr)
		}
	}
}
