package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/cli"
)

// runIn runs `steward args…` in this process and returns its exit code and
// standard error.
func runIn(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var errOut strings.Builder
	code := cli.MainContext(t.Context(), args, strings.NewReader(""), &strings.Builder{}, &errOut)
	return code, errOut.String()
}

// wantMode fails unless path exists with mode perm.
func wantMode(t *testing.T, path string, perm os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if info.Mode().Perm() != perm {
		t.Errorf("%s: mode %v, want %v", path, info.Mode().Perm(), perm)
	}
}

// wantEmpty fails unless dir holds nothing.
func wantEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Errorf("%s holds %v, want nothing", dir, entries)
	}
}

// Issue 46, item 6: the PostgreSQL provider keeps its secret key in its
// data directory (the user's state directory unless --data-dir), never in
// the current one, and refuses to start beside a key an earlier version
// left there, saying where it belongs.
func TestProviderPostgres_KeyInTheDataDirNeverTheCurrentDirectory(t *testing.T) {
	cwd, state := t.TempDir(), t.TempDir()
	t.Chdir(cwd)
	t.Setenv("XDG_STATE_HOME", state)
	// The admin URL's server is down: the provider exits 1 after it read
	// (or made) its key.
	args := []string{"provider", "postgres", "--admin-url", "postgres://u:p@127.0.0.1:1/db", "--listen", "127.0.0.1:0"}
	code, stderr := runIn(t, args...)
	if code != 1 || !strings.Contains(stderr, "127.0.0.1:1") {
		t.Fatalf("with the server down: exit %d\n%s", code, stderr)
	}
	dir := filepath.Join(state, "steward", "postgres")
	wantMode(t, dir, 0o700)
	wantMode(t, filepath.Join(dir, "postgres-provider.key"), 0o600)
	wantEmpty(t, cwd)

	other := filepath.Join(t.TempDir(), "pg")
	if code, stderr := runIn(t, append(args, "--data-dir", other)...); code != 1 || strings.Contains(stderr, "earlier version") {
		t.Fatalf("--data-dir: exit %d\n%s", code, stderr)
	}
	wantMode(t, other, 0o700)
	wantMode(t, filepath.Join(other, "postgres-provider.key"), 0o600)

	// A key in the current directory: refused, and left as it is.
	writeFile(t, "postgres-provider.key", strings.Repeat("ab", 32)+"\n")
	fresh := t.TempDir()
	t.Setenv("XDG_STATE_HOME", fresh)
	code, stderr = runIn(t, args...)
	want := filepath.Join(fresh, "steward", "postgres", "postgres-provider.key")
	if code != 1 || !strings.Contains(stderr, "it now belongs in "+want) || !strings.Contains(stderr, "mv postgres-provider.key "+want) {
		t.Errorf("beside an old key: exit %d\n%s", code, stderr)
	}
	wantEmpty(t, fresh)
	t.Setenv("XDG_STATE_HOME", state) // where a key is already
	if code, stderr := runIn(t, args...); code != 1 || !strings.Contains(stderr, "exists too") {
		t.Errorf("beside an old key, with a new one: exit %d\n%s", code, stderr)
	}
	if code, stderr := runIn(t, append(args, "--secret-file", "postgres-provider.key")...); code != 1 || strings.Contains(stderr, "earlier version") {
		t.Errorf("--secret-file naming the old key: exit %d\n%s", code, stderr)
	}
	if b, err := os.ReadFile("postgres-provider.key"); err != nil || string(b) != strings.Repeat("ab", 32)+"\n" {
		t.Errorf("the old key changed: %q (%v)", b, err)
	}
}

// Issue 46, item 6: the process provider's work directory is in the
// user's state directory unless --work-dir, never in the current one, and
// it refuses to start beside the one an earlier version made there.
func TestProviderProcess_WorkDirInTheStateDirNeverTheCurrentDirectory(t *testing.T) {
	cwd, state := t.TempDir(), t.TempDir()
	t.Chdir(cwd)
	t.Setenv("XDG_STATE_HOME", state)
	steward := newFakeSteward(t, "")
	steward.runProvider(t, "provider", "process", "--steward-url", steward.URL, "--listen", "127.0.0.1:0", "--allow-root")
	wantMode(t, filepath.Join(state, "steward", "process"), 0o700)
	wantEmpty(t, cwd)

	if err := os.Mkdir("process-provider-data", 0o750); err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	t.Setenv("XDG_STATE_HOME", fresh)
	code, stderr := runIn(t, "provider", "process", "--steward-url", steward.URL, "--listen", "127.0.0.1:0", "--allow-root")
	want := filepath.Join(fresh, "steward", "process")
	if code != 1 || !strings.Contains(stderr, "it now belongs in "+want) || !strings.Contains(stderr, "--work-dir process-provider-data") {
		t.Errorf("beside an old work directory: exit %d\n%s", code, stderr)
	}
	wantEmpty(t, fresh)
}
