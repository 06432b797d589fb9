package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tokens"
)

// Issue 13: a second server on a data directory another one holds fails at
// once, naming the holder's pid, and leaves the first alone; the tools that
// open the same store still work; once the first stops, a server starts.
// (internal/cli's tests check the same against the real binary.)
func TestStart_DataDirHeldByAnotherServerFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := apitest.Start(t, store.SQLite, func(c *server.Config) { c.DataDir = dir })

	second, err := server.New(server.Config{Dev: true, DataDir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	err = second.Start(t.Context())
	want := fmt.Sprintf("data directory %s is in use by another steward server (pid %d); stop it or use another --data-dir",
		dir, os.Getpid())
	if err == nil || err.Error() != want {
		_ = second.Stop(context.Background())
		t.Fatalf("second server on the same data directory: Start = %v; want %q", err, want)
	}
	if second.URL() != "" || second.DB() != nil {
		t.Errorf("the refused server went on starting: url %q, store open %v", second.URL(), second.DB() != nil)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "steward.lock")); err != nil || strings.TrimSpace(string(got)) != fmt.Sprint(os.Getpid()) {
		t.Errorf("steward.lock = %q, %v; want the holder's pid %d", got, err, os.Getpid())
	}
	first.Do(t, "GET", "/api/v1/health", nil).Want(t, http.StatusOK)
	// `steward token create` opens the store without the lock.
	if _, err := server.CreateToken(t.Context(), server.CreateTokenConfig{DataDir: dir, Role: "admin",
		Token: tokens.CreateParams{Name: "ops"}}); err != nil {
		t.Fatalf("token create beside a running server: %v", err)
	}

	if err := first.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	third, err := server.New(server.Config{Dev: true, DataDir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := third.Start(t.Context()); err != nil {
		t.Fatalf("a server on the data directory once the first stopped: %v", err)
	}
	if err := third.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}
