package jobs_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/stewardhq/steward/internal/jobs"
	"github.com/stewardhq/steward/internal/logtest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

type panicArgs struct{}

func (panicArgs) Kind() string { return "test.panic" }

type panicWorker struct {
	river.WorkerDefaults[panicArgs]
}

func (panicWorker) Work(context.Context, *river.Job[panicArgs]) error { panic("boom") }

// Issue 46: River's own info lines ("River client started", "Producer job
// counts" every 5 s) are logged at debug; its errors stay errors.
func TestNew_RiversInfoLinesAreDebugAndItsErrorsStay(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine, jobs.Migrator())
		var logs logtest.Buffer
		workers := jobs.NewWorkers()
		river.AddWorker(workers, &panicWorker{})
		c, err := jobs.New(jobs.Config{DB: db, Workers: workers, PollInterval: 50 * time.Millisecond,
			Logger: logs.Logger(slog.LevelDebug)})
		if err != nil {
			t.Fatal(err)
		}
		start(t, c)
		ctx := context.Background()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return c.InsertTx(ctx, tx, panicArgs{}, nil) }); err != nil {
			t.Fatal(err)
		}
		var panicked []logtest.Line
		poll.Until(t, "River logs the worker's panic", func() bool {
			panicked = nil
			for _, l := range logs.Lines(t) {
				if msg, _ := l["msg"].(string); strings.Contains(msg, "panic recovery") {
					panicked = append(panicked, l)
				}
			}
			return len(panicked) > 0
		})
		if lvl := panicked[0].Level(); lvl != "ERROR" {
			t.Errorf("River's panic line %v is at %s, want ERROR", panicked[0], lvl)
		}
		started := logs.Matching(t, "River client started")
		if len(started) != 1 || started[0].Level() != "DEBUG" {
			t.Errorf("River's start lines: %v, want one at DEBUG", started)
		}
	})
}
