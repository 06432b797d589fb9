package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
)

// A README section's blocks, read as a reader copies them into a shell:
// each command line (continuation lines and here-documents joined to it)
// runs in bash, and the lines of `#   ` right under a command are what it
// prints. Unlike walkthroughSteps, quotes, $(…) and pipes are allowed, so
// the first ten minutes and the Databases section run exactly as written.

// shellBlock is one fenced block of a README section.
type shellBlock struct {
	lang  string // the fence's language: sh, text, …
	lines []string
	steps []shellStep // sh blocks only
}

// shellStep is one command of an sh block.
type shellStep struct {
	line string   // the command as written, continuation lines joined by a newline
	want []string // what the README shows it printing, one line each
}

// readmeSection returns the fenced blocks between the heading line heading
// and the next heading of its level or above.
func readmeSection(t *testing.T, moduleDir, heading string) []shellBlock {
	t.Helper()
	f, err := os.Open(filepath.Join(moduleDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	var blocks []shellBlock
	in, fenced := false, false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		switch {
		case !in:
			in = line == heading
		case fenced && strings.HasPrefix(line, "```"):
			fenced = false
		case fenced:
			b := &blocks[len(blocks)-1]
			b.lines = append(b.lines, line)
		case strings.HasPrefix(line, "```"):
			fenced = true
			blocks = append(blocks, shellBlock{lang: strings.TrimPrefix(line, "```")})
		case strings.HasPrefix(line, "#"):
			if n := len(line) - len(strings.TrimLeft(line, "#")); n <= level && strings.HasPrefix(line[n:], " ") {
				in = false
				if len(blocks) == 0 {
					t.Fatalf("README.md: the section %q has no blocks", heading)
				}
				for i := range blocks {
					if blocks[i].lang == "sh" {
						blocks[i].steps = shellSteps(t, blocks[i].lines)
					}
				}
				return blocks
			}
		}
	}
	t.Fatalf("README.md: no section %q", heading)
	return nil
}

var hereDocument = regexp.MustCompile(`<<-?'?(\w+)'?`)

// shellSteps splits an sh block into its commands.
func shellSteps(t *testing.T, lines []string) []shellStep {
	t.Helper()
	var steps []shellStep
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case strings.HasPrefix(line, "#"):
			if len(steps) == 0 {
				t.Fatalf("README.md: %q shows output before any command", line)
			}
			s := &steps[len(steps)-1]
			s.want = append(s.want, strings.TrimSpace(strings.TrimPrefix(line, "#")))
			continue
		}
		cmd := line
		for strings.HasSuffix(strings.TrimRight(cmd, " "), "\\") && i+1 < len(lines) {
			i++
			cmd += "\n" + lines[i]
		}
		if m := hereDocument.FindStringSubmatch(cmd); m != nil {
			for i+1 < len(lines) {
				i++
				cmd += "\n" + lines[i]
				if lines[i] == m[1] {
					break
				}
			}
		}
		steps = append(steps, shellStep{line: cmd})
	}
	return steps
}

// shellPrelude makes `steward` the binary under test, as the README's
// alias makes it `go run ./cmd/steward`.
const shellPrelude = `set -o pipefail
steward() { "$STEWARD_TEST_BIN" "$@"; }
`

// runShellStep runs a step's command in bash (at most four minutes) and
// returns what it printed, stdout and stderr as they interleaved, and
// whether it exited 0.
func runShellStep(t *testing.T, env []string, dir, command string) (output string, ok bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", shellPrelude+command)
	cmd.Env, cmd.Dir = env, dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v", command, err)
	}
	t.Logf("$ %s\n%s", command, out.String())
	return out.String(), err == nil
}

// checkShown checks that output shows each of want's lines in order: runs
// of spaces stand for any spacing (columns), a duration for any duration,
// and … for anything.
func checkShown(t *testing.T, command, output string, want []string) {
	t.Helper()
	duration := regexp.MustCompile(`\d+(\\\.\d+)?(ms|s|m)\b`)
	space := regexp.MustCompile(`\s+`)
	rest := strings.Split(output, "\n")
	for _, w := range want {
		pattern := regexp.QuoteMeta(w)
		pattern = duration.ReplaceAllString(pattern, `\d+(\.\d+)?(ms|s|m)`)
		pattern = space.ReplaceAllString(pattern, `\s+`)
		pattern = strings.ReplaceAll(pattern, "…", ".*")
		re := regexp.MustCompile(pattern)
		found := false
		for len(rest) > 0 && !found {
			found = re.MatchString(rest[0])
			rest = rest[1:]
		}
		if !found {
			t.Errorf("%s: the README shows %q, which it did not print (after the lines before it):\n%s", command, w, output)
			return
		}
	}
}

// shellTestDir returns a directory for the walkthrough's /tmp/, reachable
// by the postgres user a throwaway PostgreSQL runs as when the test runs
// as root (t.TempDir's parent is private), with scripts/ linked from the
// module so the README's relative scripts/… commands run in it.
func shellTestDir(t *testing.T, moduleDir, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(moduleDir, "scripts"), filepath.Join(dir, "scripts")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serverURL waits for the server whose log is log to start and returns its
// API's URL, read from its "steward started" line.
func serverURL(t *testing.T, log *syncBuffer) string {
	t.Helper()
	var url string
	started := regexp.MustCompile(`"msg":"steward started".*"url":"([^"]+)"`)
	poll.Until(t, "the server started", func() bool {
		m := started.FindStringSubmatch(log.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})
	return url
}
