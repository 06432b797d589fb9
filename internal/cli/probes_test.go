package cli_test

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 28: an operator's upgrade and a probe's view of it, on the real
// binary. `steward server --migrate=check` refuses a schema behind this
// build, naming the command to run; `steward migrate` applies and prints
// each migration, then nothing; the server then starts, `steward
// healthcheck` says it is ready (and live). After SIGTERM /readyz answers
// 503 "draining" while the API still serves, for the drain delay; then the
// process exits 0 and the healthcheck fails.
func TestServer_MigrateCheckHealthcheckAndDrain(t *testing.T) {
	t.Parallel()
	bin := stewardBinary(t)
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "data")
		db := []string{"--data-dir", dir}
		if engine == store.Postgres {
			db = append(db, "--database-url", storetest.NewSchemaURL(t))
		}
		serverArgs := append([]string{"server", "--dev", "--listen", "127.0.0.1:0", "--migrate=check"}, db...)

		code, _, stderr := runSteward(t, bin, serverArgs...)
		if code != 1 || !strings.Contains(stderr, "migrations pending (steward 00001, ") ||
			!strings.Contains(stderr, "run `steward migrate`") {
			t.Fatalf("server --migrate=check on a fresh database: exit %d, stderr %s; want 1, naming what is pending and `steward migrate`", code, stderr)
		}

		code, stdout, stderr := runSteward(t, bin, append([]string{"migrate"}, db...)...)
		applied := strings.Count("\n"+stdout, "\napplied ")
		if code != 0 || !strings.HasPrefix(stdout, "applied steward 00001 (") || !strings.Contains(stdout, "\napplied river ") ||
			!strings.HasSuffix(stdout, "the schema is current: "+strconv.Itoa(applied)+" migrations applied\n") {
			t.Fatalf("migrate: exit %d, stdout\n%s\nstderr %s", code, stdout, stderr)
		}
		code, stdout, _ = runSteward(t, bin, append([]string{"migrate"}, db...)...)
		if code != 0 || stdout != "the schema is current: nothing to apply\n" {
			t.Fatalf("second migrate: exit %d, stdout %q", code, stdout)
		}
		code, stdout, _ = runSteward(t, bin, append([]string{"migrate", "--check"}, db...)...)
		if code != 0 || stdout != "the schema is current\n" {
			t.Fatalf("migrate --check after migrate: exit %d, stdout %q", code, stdout)
		}

		srv, log := startServer(t, bin, append(serverArgs, "--drain-delay", "3s")...)
		url := servingURL(t, log)
		code, stdout, stderr = runSteward(t, bin, "healthcheck", "--server", url)
		if code != 0 || !strings.Contains(stdout, `"migrations":"ok"`) || !strings.Contains(stdout, `"status":"ok"`) {
			t.Fatalf("healthcheck of a ready server: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if code, stdout, stderr = runSteward(t, bin, "healthcheck", "--live", "--server", url); code != 0 {
			t.Fatalf("healthcheck --live: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}

		if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, "/readyz answers 503 draining after SIGTERM", func() bool {
			code, _, stderr = runSteward(t, bin, "healthcheck", "--server", url)
			return code == 1 && strings.Contains(stderr, "answered 503") && strings.Contains(stderr, `"draining":"stopping`)
		})
		resp, err := http.Get(url + "/api/v1/catalog-items")
		if err != nil {
			t.Fatalf("the API during the drain delay: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the API during the drain delay answered %d, want 200", resp.StatusCode)
		}
		if err := srv.Wait(); err != nil {
			t.Fatalf("server after SIGTERM: %v", err)
		}
		if code, _, stderr = runSteward(t, bin, "healthcheck", "--server", url, "--timeout", "2s"); code != 1 {
			t.Fatalf("healthcheck of a stopped server: exit %d, stderr %q; want 1", code, stderr)
		}
	})
}
