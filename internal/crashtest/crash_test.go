package crashtest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// envTrials overrides how many trials TestCrash runs per store.
const envTrials = "STEWARD_CRASH_TRIALS"

// TestCrash kills the real server under load and checks that nothing
// acknowledged is lost (issue 8): a few trials per store. Trials run one
// after the other, not in parallel: each measures recovery on the machine's
// cores, and the kills' timing means nothing when trials share them.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test starts and kills the real server for a minute or so; skipped with -short")
	}
	trials := 2
	if v := os.Getenv(envTrials); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", envTrials, v)
		}
		trials = n
	}
	bin := binary(t)
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		for i := range trials {
			t.Run(fmt.Sprintf("trial%d", i+1), func(t *testing.T) {
				runTrial(t, engine, Config{Binary: bin})
			})
		}
	})
}

// TestTerminate stops the real server with SIGTERM under load, twice, and
// restarts it (issue 28): each stop turns /readyz to 503 while the server
// still serves, exits 0 within the bound, and loses nothing acknowledged
// (every invariant of TestCrash). Requests sent once the listener closed
// are retried by the clients, as behind a load balancer.
func TestTerminate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and stops the real server under load; skipped with -short")
	}
	bin := binary(t)
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		runTrial(t, engine, Config{Binary: bin, Terminate: true, Kills: 2, DrainDelay: 500 * time.Millisecond})
	})
}

// runTrial runs one trial of cfg on engine, in a directory of the test's,
// and fails the test with the report when it does not pass.
func runTrial(t *testing.T, engine store.Engine, cfg Config) {
	t.Helper()
	cfg.Dir = t.TempDir()
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	if engine == store.Postgres {
		cfg.DatabaseURL = os.Getenv(storetest.EnvDatabaseURL)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("trial could not run: %v\n%s\nserver log tail:\n%s", err, rep, rep.LogTail(40))
	}
	if !rep.Pass {
		t.Errorf("%s\nserver log tail:\n%s", rep, rep.LogTail(40))
		return
	}
	t.Log(rep)
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// binary builds the steward binary once per test process, without -race,
// into a directory TestMain removes.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		root, err := ModuleDir(ctx, ".")
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "crashtest-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "steward")
		buildErr = Build(ctx, root, builtBin)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}
