package cli_test

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/cli"
	"github.com/stewardhq/steward/internal/logtest"
	"github.com/stewardhq/steward/internal/poll"
)

// Issue 46: `steward server --dev` logs each request at debug, with
// --log-requests at info; its log is JSON on a stderr that is not a
// terminal (--log-format auto), text with --log-format text.
func TestServer_DevLogsRequestsAtDebugInTheFormatAsked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		flags []string
		want  *regexp.Regexp // the request line
	}{
		{"auto on a pipe", []string{"--log-level", "debug"},
			regexp.MustCompile(`(?m)^\{"time":"[^"]+","level":"DEBUG","msg":"request",.*"path":"/api/v1/health"`)},
		{"text, --log-requests", []string{"--log-format", "text", "--log-requests"},
			regexp.MustCompile(`(?m)^time=\S+ level=INFO msg=request .*path=/api/v1/health `)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logs := runServer(t, tc.flags...)
			started := regexp.MustCompile(`"steward started".*"url":"([^"]+)"|msg="steward started" url=(\S+)`)
			var m []string
			// A first start migrates a fresh store: on a loaded machine that
			// took 25s of the 30s poll.Until waits.
			poll.UntilWithin(t, 2*time.Minute, "the server started", func() bool {
				m = started.FindStringSubmatch(logs.String())
				return m != nil
			})
			resp, err := http.Get(m[1] + m[2] + "/api/v1/health")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			poll.Until(t, "the request is logged", func() bool { return tc.want.MatchString(logs.String()) })
		})
	}
}

// runServer runs `steward server --dev` in process with flags, on a
// data dir and port of its own, until the test ends; its log is returned.
func runServer(t *testing.T, flags ...string) *logtest.Buffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &logtest.Buffer{}
	args := append([]string{"server", "--dev", "--data-dir", filepath.Join(t.TempDir(), "data"), "--listen", "127.0.0.1:0"}, flags...)
	done := make(chan int)
	go func() {
		var out strings.Builder
		done <- cli.MainContext(ctx, args, strings.NewReader(""), &out, logs)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("steward server exited %d:\n%s", code, logs)
		}
	})
	return logs
}
