package jobs_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"go.uber.org/goleak"

	"github.com/stewardhq/steward/internal/jobs"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"))
}

type pingArgs struct {
	N int `json:"n"`
}

func (pingArgs) Kind() string { return "test.ping" }

type pingWorker struct {
	river.WorkerDefaults[pingArgs]
	done chan int
}

func (w *pingWorker) Work(_ context.Context, job *river.Job[pingArgs]) error {
	w.done <- job.Args.N
	return nil
}

func start(t *testing.T, c *jobs.Client) {
	t.Helper()
	// A start context that ends at once must not stop the client.
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	cancel()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
}

func TestInsertTx_RunsOnlyCommittedJobs(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine, jobs.Migrator())
		workers := jobs.NewWorkers()
		w := &pingWorker{done: make(chan int, 10)}
		river.AddWorker(workers, w)
		c, err := jobs.New(jobs.Config{DB: db, Workers: workers, PollInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		start(t, c)
		ctx := context.Background()
		rollback := errors.New("rollback")
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := c.InsertTx(ctx, tx, pingArgs{N: 1}, nil); err != nil {
				return err
			}
			return rollback
		}); !errors.Is(err, rollback) {
			t.Fatalf("InTx: %v", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return c.InsertTx(ctx, tx, pingArgs{N: 2}, nil) }); err != nil {
			t.Fatalf("InTx: %v", err)
		}
		select {
		case n := <-w.done:
			if n != 2 {
				t.Fatalf("worked job %d, want only the committed job 2", n)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("committed job never ran")
		}
	})
}

func TestPeriodic_RunsOnTheLeader(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine, jobs.Migrator())
		var runs atomic.Int32
		ran := make(chan struct{}, 1)
		c, err := jobs.New(jobs.Config{DB: db, PollInterval: 50 * time.Millisecond, Periodic: []jobs.Periodic{{
			Name: "tick", Interval: time.Hour, RunOnStart: true,
			Run: func(context.Context) error {
				runs.Add(1)
				select {
				case ran <- struct{}{}:
				default:
				}
				return nil
			},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		start(t, c)
		select {
		case <-ran:
		case <-time.After(30 * time.Second):
			t.Fatal("periodic job with RunOnStart never ran")
		}
	})
}

func TestNew_RefusesBadPeriodicJobs(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite, jobs.Migrator())
	run := func(context.Context) error { return nil }
	for name, p := range map[string][]jobs.Periodic{
		"no name":     {{Interval: time.Second, Run: run}},
		"no interval": {{Name: "a", Run: run}},
		"duplicate":   {{Name: "a", Interval: time.Second, Run: run}, {Name: "a", Interval: time.Second, Run: run}},
	} {
		if _, err := jobs.New(jobs.Config{DB: db, Periodic: p}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
