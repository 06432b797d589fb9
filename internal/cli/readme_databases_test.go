package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/crashtest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 24 and 46: the README's Databases section, run as a reader copies
// it into a shell, against the real binary, throwaway PostgreSQL servers of
// Debian's binaries and the PostgreSQL provider: an order of postgres-small
// that is up, its credentials (that connect, and write), psql and an edit in
// place, a rehydration onto a second server's provider chosen by the
// section's policy (the data follows), the rotation (the old password
// refused, the new one working), and a delete that drops the database. The
// second and third blocks run before the first's delete, as the section
// says.
//
// What the test changes, and only in how the commands reach each other:
// /tmp/ is a directory of the test's, HOME too (the provider's key is
// under it); the server and the providers listen on 127.0.0.1:0, found
// through STEWARD_SERVER and by curl in place of localhost:8080.
func TestReadme_DatabasesWalkthrough(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.EnvDatabaseURL) == "" {
		t.Skipf("%s is not set (the walkthrough needs PostgreSQL's binaries, as the tests that use it)", storetest.EnvDatabaseURL)
	}
	moduleDir, err := crashtest.ModuleDir(context.Background(), ".")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeSection(t, moduleDir, "### Databases")
	var main, before []shellStep
	for _, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		if main == nil {
			main = b.steps
		} else {
			before = append(before, b.steps...)
		}
	}
	// The later blocks run "before the delete above".
	var steps []shellStep
	for i, st := range main {
		if strings.HasPrefix(st.line, "steward delete order") {
			steps = append(append(steps, before...), main[i:]...)
			break
		}
		steps = append(steps, st)
	}
	if len(steps) != len(main)+len(before) {
		t.Fatalf("README.md: the Databases block has no steward delete order step")
	}
	bin := stewardBinary(t)
	dir := shellTestDir(t, moduleDir, "steward-readme-databases-")
	env := []string{"HOME=" + filepath.Join(dir, "home"), "STEWARD_TEST_BIN=" + bin, "STEWARD_LISTEN=127.0.0.1:0"}
	for _, kv := range stewardEnv() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "XDG_") && name != "HOME" {
			env = append(env, kv)
		}
	}
	if _, err := exec.LookPath("psql"); err != nil {
		// Debian's client wrapper is missing: its binaries, as scripts/pg-throwaway finds them.
		bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		if len(bins) == 0 {
			t.Fatal("no psql and no /usr/lib/postgresql/*/bin")
		}
		env = append(env, "PATH="+bins[len(bins)-1]+":"+os.Getenv("PATH"))
	}

	var server, credentialsURL string
	saw := map[string]bool{}
	for _, st := range steps {
		command := strings.NewReplacer("/tmp/", dir+"/", "localhost:8080", strings.TrimPrefix(server, "http://"),
			"127.0.0.1:9112", "127.0.0.1:0").Replace(st.line)
		words := strings.Fields(st.line)
		step := strings.Join(words[:min(2, len(words))], " ")
		saw[step] = true
		if strings.Contains(st.line, "# terminal ") {
			// A terminal of its own: runs until the test ends.
			log := startBackground(t, env, dir, []string{"bash", "-c",
				shellPrelude + "exec \"$STEWARD_TEST_BIN\" " + strings.TrimPrefix(command, "steward ")})
			switch step {
			case "steward server":
				server = serverURL(t, log)
				env = append(env, "STEWARD_SERVER="+server)
			case "steward provider":
				name := "postgres-sp"
				if m := regexp.MustCompile(`--name (\S+)`).FindStringSubmatch(st.line); m != nil {
					name = m[1]
				}
				poll.Until(t, "provider "+name+" is registered", func() bool {
					r, err := http.Get(server + "/api/v1/providers/" + name)
					if err != nil {
						return false
					}
					r.Body.Close()
					return r.StatusCode == http.StatusOK
				})
			default:
				t.Fatalf("README.md: %q runs in a terminal of its own; the test knows the server and providers only", st.line)
			}
			continue
		}
		if step == "scripts/pg-throwaway" && words[1] == "start" {
			stop := exec.Command("scripts/pg-throwaway", "stop", strings.ReplaceAll(words[2], "/tmp/", dir+"/"))
			stop.Dir, stop.Env = dir, env
			t.Cleanup(func() { _ = stop.Run() })
		}
		output, ok := runShellStep(t, env, dir, command)
		if !ok {
			t.Fatalf("%s: exit status not 0:\n%s", st.line, output)
		}
		if strings.HasPrefix(st.line, "curl ") && regexp.MustCompile(`"status":\s*[45]\d\d`).MatchString(output) {
			t.Errorf("%s: answered a problem:\n%s", st.line, output)
		}
		checkShown(t, st.line, output, st.want)
		switch step {
		case "steward order":
			if !strings.Contains(output, "state up") {
				t.Errorf("%s: no progress line reaching up:\n%s", st.line, output)
			}
		case "steward describe":
			if !regexp.MustCompile(`(?m)^\s+username: app$`).MatchString(output) {
				t.Errorf("%s shows no output username: app:\n%s", st.line, output)
			}
			if saw["steward rehydrate"] {
				if !regexp.MustCompile(`(?m)^Provider Name:\s+pg-eu$`).MatchString(output) {
					t.Errorf("after the rehydration, %s names another provider than pg-eu:\n%s", st.line, output)
				}
				if n := writeAndCount(t, currentURL(t, server, "app-db")); n != 3 {
					t.Errorf("after the rehydration, %d notes of the test's and a third write, want 3 (the two before it moved)", n)
				}
				if !tableExists(t, currentURL(t, server, "app-db"), "notes") {
					t.Errorf("after the rehydration, the README's table notes is not in the new database")
				}
			}
		case "steward credentials":
			if strings.Contains(st.line, "-o url") && credentialsURL == "" {
				credentialsURL = strings.TrimSpace(output)
				if n := writeAndCount(t, credentialsURL); n != 1 {
					t.Errorf("%d notes after the first write, want 1", n)
				}
			}
		case "steward rotate-credentials":
			if _, err := pgx.Connect(t.Context(), credentialsURL); err == nil || !strings.Contains(err.Error(), "password authentication failed") {
				t.Errorf("after %s, the old password: %v; want refused", st.line, err)
			}
			if n := writeAndCount(t, currentURL(t, server, "app-db")); n != 2 {
				t.Errorf("%d notes after the rotation and a second write, want 2", n)
			}
		}
	}
	for _, step := range []string{"steward server", "scripts/pg-throwaway start", "steward provider", "steward order",
		"steward credentials", "steward rotate-credentials", "psql", "eval", "curl -X", "cat >", "steward apply",
		"steward rehydrate", "steward delete", "scripts/pg-throwaway stop"} {
		if !slices.ContainsFunc(steps, func(st shellStep) bool { return strings.HasPrefix(st.line, step+" ") }) {
			t.Errorf("the walkthrough lacks a %s step", step)
		}
	}
}

// tableExists says whether the database url names has table.
func tableExists(t *testing.T, url, table string) bool {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect with the credentials: %v", err)
	}
	defer conn.Close(context.Background())
	var found bool
	if err := conn.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", table).Scan(&found); err != nil {
		t.Fatal(err)
	}
	return found
}

// writeAndCount connects with url, adds a note to a table of the test's
// (the README's reader makes notes) and returns how many notes there are.
func writeAndCount(t *testing.T, url string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect with the credentials: %v", err)
	}
	defer conn.Close(context.Background())
	for _, q := range []string{"CREATE TABLE IF NOT EXISTS test_notes (id serial, body text)", "INSERT INTO test_notes (body) VALUES ('hello')"} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("write as the owner: %v", err)
		}
	}
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM test_notes").Scan(&n); err != nil {
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
