package cli_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stewardhq/steward/internal/bench"
)

// `steward bench floor` serves the fixed answer from a child process with
// the server's HTTP settings, drives it, and leaves no child behind; every
// other run measures the floor first and reports itself as fractions of it.
func TestBenchFloor_MeasuresAndComparesAgainstIt(t *testing.T) {
	t.Parallel()
	bin := stewardBinary(t)

	code, stdout, stderr := runSteward(t, bin, "bench", "floor", "-c", "2", "-d", "300ms", "--warmup", "0", "--body-size", "500", "--json")
	if code != 0 {
		t.Fatalf("bench floor exited %d: %s", code, stderr)
	}
	var floor bench.Result
	if err := json.Unmarshal([]byte(stdout), &floor); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if floor.StatusCounts[200] == 0 || len(floor.StatusCounts) != 1 || floor.Errors != 0 || !strings.HasSuffix(floor.Target, "/floor") {
		t.Fatalf("floor run = %+v, want only 200s from …/floor", floor)
	}

	var asked atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(target.Close)
	code, stdout, stderr = runSteward(t, bin, "bench", "--url", target.URL, "--path", "/x", "-c", "1", "-d", "300ms", "--warmup", "0",
		"--floor-duration", "300ms", "--floor-body-size", "100", "--json")
	if code != 0 {
		t.Fatalf("bench exited %d: %s", code, stderr)
	}
	var run bench.Result
	if err := json.Unmarshal([]byte(stdout), &run); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	f := run.Floor
	if f == nil || f.Throughput <= 0 || f.BodyBytes != 100 || run.StatusCounts[204] == 0 || asked.Load() < int64(run.Requests) {
		t.Fatalf("run = %+v, floor %+v: want 204s from the target and a measured floor of 100 bytes", run, f)
	}
	if want := run.Throughput / f.Throughput; math.Abs(f.Fraction-want) > 1e-9 {
		t.Errorf("fraction %g, want the run's rate over the floor's, %g", f.Fraction, want)
	}

	code, _, stderr = runSteward(t, bin, "bench", "floor", "--body-size", "3", "-d", "100ms")
	if code == 0 || !strings.Contains(stderr, "body size 3") {
		t.Errorf("a 3-byte floor: exit %d, %s; want a refusal naming the size", code, stderr)
	}

	if out, err := exec.Command("pgrep", "-f", bin+" bench floor floor-server").Output(); err == nil {
		t.Errorf("floor servers still running after the runs: %s", out)
	}
}
