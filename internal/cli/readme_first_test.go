package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/crashtest"
	"github.com/stewardhq/steward/internal/poll"
)

// Issue 46: the README's "The first ten minutes", run as a reader copies
// it into terminal 2 against the server of "Two commands" in terminal 1:
// every command exits 0 unless the README shows it refused, prints what the
// README shows under it, and leaves no process running once its order is
// gone.
//
// What the test changes, and only in how the commands reach each other:
// `steward` is the binary built from this tree (the README's alias runs
// the same code with go run); the commands run in a directory of the
// test's (the server's ./steward-data with them); the server listens on
// 127.0.0.1:0, found by the client through STEWARD_SERVER and by curl in
// place of localhost:8080.
func TestReadme_FirstTenMinutes(t *testing.T) {
	t.Parallel()
	moduleDir, err := crashtest.ModuleDir(context.Background(), ".")
	if err != nil {
		t.Fatal(err)
	}
	start := readmeSection(t, moduleDir, "## Two commands")
	if start[0].lang != "sh" || len(start[0].steps) != 1 || start[0].steps[0].line != "go run ./cmd/steward server --dev" {
		t.Fatalf("README.md: the first command is %q; the test runs the server as go run ./cmd/steward server --dev", start[0].lines)
	}
	blocks := readmeSection(t, moduleDir, "### The first ten minutes")
	bin := stewardBinary(t)
	dir := shellTestDir(t, moduleDir, "steward-readme-first-")
	env := append(stewardEnv(), "HOME="+filepath.Join(dir, "home"), "STEWARD_TEST_BIN="+bin)

	// Terminal 1.
	// The cleanup pass keeps its default interval (10s): a shorter one could
	// remove the old instance before rehydrate --wait says it is removing it.
	serverEnv := append(append([]string{}, env...), "STEWARD_LISTEN=127.0.0.1:0")
	t.Cleanup(func() { stopLeftProcesses(t, dir) }) // after the server stops, so that it restarts none
	log := startBackground(t, serverEnv, dir, []string{bin, "server", "--dev"})
	server := serverURL(t, log)
	env = append(env, "STEWARD_SERVER="+server)
	hostPort := strings.TrimPrefix(server, "http://")

	saw := map[string]bool{}
	for _, b := range blocks {
		if b.lang == "text" {
			// What the server's log begins with: the same messages.
			for _, m := range regexp.MustCompile(`msg="([^"]+?)"( |$)`).FindAllStringSubmatch(strings.Join(b.lines, "\n"), -1) {
				msg := strings.ReplaceAll(m[1], `\"`, `"`)
				if !strings.Contains(log.String(), mustJSON(t, msg)) {
					t.Errorf("README.md shows the server logging %q; its log:\n%s", msg, log.String())
				}
			}
			continue
		}
		for _, st := range b.steps {
			if strings.HasPrefix(st.line, "alias steward=") {
				saw["alias"] = true
				continue
			}
			command := strings.ReplaceAll(st.line, "localhost:8080", hostPort)
			output, ok := runShellStep(t, env, dir, command)
			refused := len(st.want) > 0 && strings.HasPrefix(st.want[0], "steward: ")
			switch {
			case refused && ok:
				t.Errorf("%s: exit 0; the README shows it refused", st.line)
			case !refused && !ok:
				t.Fatalf("%s: exit status not 0:\n%s", st.line, output)
			case strings.HasPrefix(st.line, "curl ") && regexp.MustCompile(`"status":\s*[45]\d\d`).MatchString(output):
				t.Errorf("%s: answered a problem:\n%s", st.line, output)
			}
			checkShown(t, st.line, output, st.want)
			words := strings.Fields(st.line)
			saw[strings.Join(words[:min(2, len(words))], " ")] = true
			switch {
			case strings.HasPrefix(st.line, "steward get items"):
				items := regexp.MustCompile(`(?m)^\S+\s+\S+\s+(\d+|none) healthy\s`).FindAllString(output, -1)
				if !strings.Contains(st.line, " five items") || len(items) != 5 {
					t.Errorf("%s: %d items; the README says five:\n%s", st.line, len(items), output)
				}
			case strings.HasPrefix(st.line, "steward rehydrate"):
				if !strings.Contains(output, "done true") || !regexp.MustCompile(`the old instance \S+ on process-sp is being removed`).MatchString(output) {
					t.Errorf("%s: no line saying it is done and the old instance is being removed:\n%s", st.line, output)
				}
			case strings.Contains(st.line, "/api/v1/health"):
				if !strings.Contains(output, `"status":"ok"`) {
					t.Errorf("%s: not ok:\n%s", st.line, output)
				}
			}
		}
	}
	for _, step := range []string{"alias", "steward version", "steward order", "steward rehydrate", "steward repair",
		"steward reconcile", "steward delete", "curl -s"} {
		if !saw[step] {
			t.Errorf("the walkthrough lacks a %s step", step)
		}
	}
	// The old instances a rehydration left go at the next cleanup pass.
	poll.UntilWithin(t, 2*time.Minute, "no instance left on the process provider", func() bool {
		records, _ := filepath.Glob(filepath.Join(dir, "steward-data", "process-provider", ".state", "*.json"))
		return len(records) == 0
	})
}

// mustJSON returns s as a JSON string, as the server's log writes it.
func mustJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stopLeftProcesses kills every process the in-process provider still
// records under dir: workloads outlive the server, not the test.
func stopLeftProcesses(t *testing.T, dir string) {
	records, _ := filepath.Glob(filepath.Join(dir, "steward-data", "process-provider", ".state", "*.json"))
	for _, path := range records {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var r struct {
			Members []struct{ PID int }
			Stale   []struct{ PID int }
		}
		if json.Unmarshal(b, &r) != nil {
			continue
		}
		for _, m := range append(r.Members, r.Stale...) {
			if m.PID > 0 {
				t.Logf("killing process %d left by %s", m.PID, filepath.Base(path))
				_ = syscall.Kill(m.PID, syscall.SIGKILL)
			}
		}
	}
}
