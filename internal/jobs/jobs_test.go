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

// TestReap_RunsADeadProcessesJobsAgainAtOnce simulates a kill -9: two jobs
// were fetched and left running, one by a process now dead, one by a live
// one. Reap makes only the dead one's job run again, long before River's
// rescue window.
func TestReap_RunsADeadProcessesJobsAgainAtOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine, jobs.Migrator())
		enqueuer := jobs.NewWorkers()
		river.AddWorker(enqueuer, &pingWorker{})
		paused, err := jobs.New(jobs.Config{DB: db, Workers: enqueuer, Paused: true})
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 2; n++ {
			if err := db.InTx(ctx, func(tx *store.Tx) error { return paused.InsertTx(ctx, tx, pingArgs{N: n}, nil) }); err != nil {
				t.Fatal(err)
			}
		}
		// What a fetch by each process left behind.
		crash := `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = datetime('now'),
			attempted_by = jsonb(json_array(?)) WHERE json_extract(args, '$.n') = ?`
		if engine == store.Postgres {
			crash = `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now(),
				attempted_by = ARRAY[$1::text] WHERE (args->>'n')::int = $2`
		}
		for n, by := range map[int]string{1: "dead-1", 2: "alive-1"} {
			if _, err := db.Exec(ctx, crash, by, n); err != nil {
				t.Fatalf("simulate the fetch of job %d: %v", n, err)
			}
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return jobs.Reap(ctx, tx, []string{"dead-1"}) }); err != nil {
			t.Fatalf("reap: %v", err)
		}

		workers := jobs.NewWorkers()
		w := &pingWorker{done: make(chan int, 10)}
		river.AddWorker(workers, w)
		c, err := jobs.New(jobs.Config{DB: db, Workers: workers, PollInterval: 50 * time.Millisecond, ID: "alive-2"})
		if err != nil {
			t.Fatal(err)
		}
		start(t, c)
		select {
		case n := <-w.done:
			if n != 1 {
				t.Fatalf("worked job %d, want the dead process's job 1", n)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the dead process's job never ran again")
		}
		var state string
		q := `SELECT state FROM river_job WHERE json_extract(args, '$.n') = 2`
		if engine == store.Postgres {
			q = `SELECT state FROM river_job WHERE (args->>'n')::int = 2`
		}
		if err := db.QueryRow(ctx, q).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state != "running" {
			t.Errorf("the live process's job is %s, want still running (not taken from a live process)", state)
		}
	})
}
