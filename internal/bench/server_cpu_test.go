package bench

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// With ServerPID, a run reports the CPU the server's process used over
// its measured phase. Here the server is this test's own process, whose
// handler hashes for about a millisecond of CPU a request: the figure a
// request must be at least that. A process that is not there is an error.
func TestRun_ReportsTheServersCPU(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.Sum256([]byte(r.URL.Path))
		for start := time.Now(); time.Since(start) < time.Millisecond; {
			sum = sha256.Sum256(sum[:])
		}
		io.WriteString(w, `{"status":"ok"}`)
	})
	res, err := Run(context.Background(), Config{TargetURL: srv.URL, Path: "/", Concurrency: 2, Requests: 400,
		ServerPID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	c := res.ServerCPU
	if c == nil {
		t.Fatalf("result %+v has no server CPU", res)
	}
	if c.PerRequest < 500*time.Microsecond || c.Seconds <= 0 || c.Cores <= 0 {
		t.Errorf("server CPU %+v; want at least the handler's 1 ms a request", *c)
	}
	var out strings.Builder
	if err := res.Write(&out); err != nil || !strings.Contains(out.String(), "server   pid ") {
		t.Errorf("report %q (%v) does not give the server's CPU", out.String(), err)
	}

	if _, err := Run(context.Background(), Config{TargetURL: srv.URL, Path: "/", Requests: 1, ServerPID: 1 << 30}); err == nil {
		t.Error("a run measuring a process that does not exist succeeded")
	}
}
