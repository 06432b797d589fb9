package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/crashtest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 24: the README's Databases walkthrough, run as it is written
// against the real binary, a throwaway PostgreSQL server of Debian's
// binaries and the PostgreSQL provider: an order of postgres-small that is
// up, its credentials (that connect, and write), their rotation (the old
// password refused, the new one working), and a delete that drops the
// database.
//
// What the test changes, and only in how the commands reach each other:
// /tmp/ is a directory of the test's; the server listens on 127.0.0.1:0
// and the others (the provider too) find it through STEWARD_SERVER;
// the provider listens on 127.0.0.1:0 and keeps its key in the test's
// directory (STEWARD_LISTEN, STEWARD_SECRET_FILE), as a user's environment
// could say.
func TestReadme_DatabasesWalkthrough(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.EnvDatabaseURL) == "" {
		t.Skipf("%s is not set (the walkthrough needs PostgreSQL's binaries, as the tests that use it)", storetest.EnvDatabaseURL)
	}
	ctx := context.Background()
	moduleDir, err := crashtest.ModuleDir(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	steps := walkthroughSteps(t, readmeBlock(t, moduleDir, "TestReadme_DatabasesWalkthrough"), "steward", "scripts/pg-throwaway")
	bin := stewardBinary(t)
	// Not t.TempDir: its parent is private, and the cluster's owner
	// (postgres, when the test runs as root) must reach this directory.
	dir, err := os.MkdirTemp("", "steward-readme-databases-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(stewardEnv(), "HOME="+filepath.Join(dir, "home"), "STEWARD_DATA_DIR="+filepath.Join(dir, "data"),
		"STEWARD_LISTEN=127.0.0.1:0", "STEWARD_SECRET_FILE="+filepath.Join(dir, "postgres-provider.key"))

	var server, credentialsURL string
	saw := map[string]bool{}
	for _, st := range steps {
		args := append([]string{}, st.args...)
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "/tmp/", dir+"/")
		}
		sub := args[1]
		if args[0] == "steward" {
			args[0] = bin
		}
		saw[st.args[0]+" "+sub] = true
		switch {
		case st.args[0] == "steward" && sub == "server":
			log := startBackground(t, env, moduleDir, args)
			re := regexp.MustCompile(`"msg":"steward started".*"url":"([^"]+)"`)
			poll.Until(t, "the server started", func() bool {
				m := re.FindStringSubmatch(log.String())
				if m != nil {
					server = m[1]
				}
				return m != nil
			})
			env = append(env, "STEWARD_SERVER="+server)
		case st.args[0] == "steward" && sub == "provider":
			startBackground(t, env, moduleDir, args)
			poll.Until(t, "the postgres provider is registered", func() bool {
				r, err := http.Get(server + "/api/v1/providers/postgres-sp")
				if err != nil {
					return false
				}
				r.Body.Close()
				return r.StatusCode == http.StatusOK
			})
		case st.args[0] == "scripts/pg-throwaway" && sub == "start":
			stop := exec.Command("scripts/pg-throwaway", "stop", args[2])
			stop.Dir, stop.Env = moduleDir, env
			t.Cleanup(func() { _ = stop.Run() })
			runWalkthroughStep(t, env, moduleDir, st.line, args)
		default:
			stdout, stderr := runWalkthroughStep(t, env, moduleDir, st.line, args)
			switch {
			case sub == "order" && !strings.Contains(stderr, "up"):
				t.Errorf("%s: no progress line reaching up:\n%s", st.line, stderr)
			case sub == "describe" && !regexp.MustCompile(`(?m)^\s+username: app$`).MatchString(stdout):
				t.Errorf("%s shows no output username: app:\n%s", st.line, stdout)
			case sub == "credentials":
				credentialsURL = strings.TrimSpace(stdout)
				if n := writeAndCount(t, credentialsURL); n != 1 {
					t.Errorf("%d notes after the first write, want 1", n)
				}
			case sub == "rotate-credentials":
				if _, err := pgx.Connect(t.Context(), credentialsURL); err == nil || !strings.Contains(err.Error(), "password authentication failed") {
					t.Errorf("after %s, the old password: %v; want refused", st.line, err)
				}
				if n := writeAndCount(t, currentURL(t, server, "app-db")); n != 2 {
					t.Errorf("%d notes after the rotation and a second write, want 2", n)
				}
			}
		}
	}
	for _, step := range []string{"steward server", "scripts/pg-throwaway start", "steward provider", "steward order",
		"steward credentials", "steward rotate-credentials", "steward delete", "scripts/pg-throwaway stop"} {
		if !saw[step] {
			t.Errorf("the walkthrough lacks a %s step", step)
		}
	}
}

// writeAndCount connects with url, adds a note to a table of its own and
// returns how many notes there are.
func writeAndCount(t *testing.T, url string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect with the credentials: %v", err)
	}
	defer conn.Close(context.Background())
	for _, q := range []string{"CREATE TABLE IF NOT EXISTS notes (id serial, body text)", "INSERT INTO notes (body) VALUES ('hello')"} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("write as the owner: %v", err)
		}
	}
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM notes").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// currentURL reads the order's credentials through the API.
func currentURL(t *testing.T, server, order string) string {
	t.Helper()
	r, err := http.Get(server + "/api/v1/catalog-item-instances/" + order + "/credentials")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var c struct{ URL string }
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil || c.URL == "" {
		t.Fatalf("credentials of %s: %d, %v", order, r.StatusCode, err)
	}
	return c.URL
}
