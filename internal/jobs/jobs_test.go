package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.uber.org/goleak"

	"github.com/stewardhq/steward/internal/jobs"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"))
}

type pingArgs struct {
	N    int    `json:"n"`
	Name string `json:"name,omitempty"`
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

// pingClient builds a client on db whose registry holds w (a worker that
// drops what it works when w has no channel).
func pingClient(tb testing.TB, db *store.DB, w *pingWorker, cfg jobs.Config) *jobs.Client {
	tb.Helper()
	cfg.DB, cfg.Workers = db, jobs.NewWorkers()
	river.AddWorker(cfg.Workers, w)
	c, err := jobs.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
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
		awaitLeaderWork(t, db, "", "periodic job with RunOnStart never ran")
	})
}

// awaitLeaderWork starts a client with a periodic job that runs on start,
// which only the leader does, and waits for it to run.
func awaitLeaderWork(t *testing.T, db *store.DB, id, failure string) {
	t.Helper()
	ran := make(chan struct{}, 1)
	c, err := jobs.New(jobs.Config{DB: db, PollInterval: 50 * time.Millisecond, ID: id, Periodic: []jobs.Periodic{{
		Name: "tick", Interval: time.Hour, RunOnStart: true,
		Run: func(context.Context) error {
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
		t.Fatal(failure)
	}
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
		paused := pingClient(t, db, &pingWorker{}, jobs.Config{Paused: true})
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

// TestPending_TellsQueuedFromWorkedJobs: a job is pending while queued (seen
// from the database and from inside a transaction), only for its own
// argument value, and no longer once worked.
func TestPending_TellsQueuedFromWorkedJobs(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine, jobs.Migrator())
		w := &pingWorker{done: make(chan int, 10)}
		paused := pingClient(t, db, w, jobs.Config{Paused: true})
		pending := func(q store.Querier, value string) bool {
			t.Helper()
			ok, err := paused.Pending(ctx, q, pingArgs{}.Kind(), "name", value)
			if err != nil {
				t.Fatalf("pending %s: %v", value, err)
			}
			return ok
		}
		if pending(db, "a") {
			t.Fatal("pending before any job was queued")
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := paused.InsertTx(ctx, tx, pingArgs{Name: "a"}, nil); err != nil {
				return err
			}
			if !pending(tx, "a") {
				t.Error("the transaction does not see the job it queued")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !pending(db, "a") || pending(db, "b") {
			t.Fatalf("pending a=%v b=%v, want only a", pending(db, "a"), pending(db, "b"))
		}

		start(t, pingClient(t, db, w, jobs.Config{PollInterval: 50 * time.Millisecond}))
		select {
		case <-w.done:
		case <-time.After(20 * time.Second):
			t.Fatal("the job never ran")
		}
		poll.Until(t, "the worked job is no longer pending", func() bool { return !pending(db, "a") })
	})
}

// TestReap_ADeadLeaderResignsAtOnce simulates a leader killed with its lease
// an hour from expiry: after Reap, a live client is elected at once and runs
// the leader's work (here a periodic job that runs on start).
func TestReap_ADeadLeaderResignsAtOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine, jobs.Migrator())
		lease := `INSERT INTO river_leader (elected_at, expires_at, leader_id, name)
			VALUES (datetime('now', 'subsec'), datetime('now', '+1 hour', 'subsec'), ?, 'default')`
		if engine == store.Postgres {
			lease = `INSERT INTO river_leader (elected_at, expires_at, leader_id, name)
				VALUES (now(), now() + interval '1 hour', $1, 'default')`
		}
		if _, err := db.Exec(ctx, lease, "dead-1"); err != nil {
			t.Fatalf("simulate the dead leader's lease: %v", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return jobs.Reap(ctx, tx, []string{"dead-1"}) }); err != nil {
			t.Fatalf("reap: %v", err)
		}
		awaitLeaderWork(t, db, "alive-1", "no live client became leader: the dead leader's lease still holds")
	})
}

// pingArgsWithOpts is a pingArgs that River itself inserts: its own insert
// options make it not plain, and they add nothing.
type pingArgsWithOpts struct{ pingArgs }

func (pingArgsWithOpts) InsertOpts() river.InsertOpts { return river.InsertOpts{} }

// TestInsertTx_PlainRowIsRiversOwn guards the SQLite insert that bypasses
// River's (see docs/jobs.md): the row it writes must read back through
// River's public job list exactly as the row River's own insert writes.
func TestInsertTx_PlainRowIsRiversOwn(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine, jobs.Migrator())
		c := pingClient(t, db, &pingWorker{}, jobs.Config{Paused: true})
		opts := &river.InsertOpts{MaxAttempts: 7, Priority: 2, Queue: jobs.QueueProviders}
		insert := func(args river.JobArgs, o *river.InsertOpts) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *store.Tx) error { return c.InsertTx(ctx, tx, args, o) }); err != nil {
				t.Fatal(err)
			}
		}
		insert(pingArgs{N: 1}, nil)
		insert(pingArgsWithOpts{pingArgs{N: 1}}, opts) // not plain: River inserts it
		insert(pingArgs{N: 1}, opts)
		list, err := c.JobList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 3 {
			t.Fatalf("listed %d jobs, want 3", len(list))
		}
		if list[0].MaxAttempts != river.MaxAttemptsDefault || list[0].Priority != river.PriorityDefault || list[0].Queue != river.QueueDefault {
			t.Errorf("a job without options got max_attempts %d, priority %d, queue %q; want River's defaults",
				list[0].MaxAttempts, list[0].Priority, list[0].Queue)
		}
		want, got := list[1], list[2]
		for _, r := range []*rivertype.JobRow{want, got} {
			r.ID, r.CreatedAt, r.ScheduledAt = 0, time.Time{}, time.Time{}
			// River's SQLite insert marks every row with a nonce that tells
			// it whether a unique insert was skipped; plain jobs are not unique.
			var metadata map[string]any
			if err := json.Unmarshal(r.Metadata, &metadata); err != nil {
				t.Fatalf("metadata %s: %v", r.Metadata, err)
			}
			delete(metadata, "river:unique_nonce")
			r.Metadata, _ = json.Marshal(metadata)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("plain insert's row\n%+v\nRiver's insert's row\n%+v", got, want)
		}
	})
}

// BenchmarkInsertTx compares the plain insert with River's own on the same
// job (docs/jobs.md gives the figures): go test -run X -bench InsertTx.
func BenchmarkInsertTx(b *testing.B) {
	for name, args := range map[string]river.JobArgs{"plain": pingArgs{N: 1}, "river": pingArgsWithOpts{pingArgs{N: 1}}} {
		b.Run(name, func(b *testing.B) {
			db := storetest.Open(b, store.SQLite, jobs.Migrator())
			c := pingClient(b, db, &pingWorker{}, jobs.Config{Paused: true})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := db.InTx(ctx, func(tx *store.Tx) error { return c.InsertTx(ctx, tx, args, nil) }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLeads_OneClientLeadsAndLeadershipMovesWhenItStops: of two clients on
// one database exactly one leads; when it stops, the other leads. A paused
// client never does.
func TestLeads_OneClientLeadsAndLeadershipMovesWhenItStops(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine, jobs.Migrator())
		leads := func(c *jobs.Client) bool {
			t.Helper()
			ok, err := c.Leads(ctx)
			if err != nil {
				t.Fatalf("leads: %v", err)
			}
			return ok
		}
		paused := pingClient(t, db, &pingWorker{}, jobs.Config{Paused: true, ID: "paused"})
		a := pingClient(t, db, &pingWorker{}, jobs.Config{PollInterval: 50 * time.Millisecond, ID: "a"})
		b := pingClient(t, db, &pingWorker{}, jobs.Config{PollInterval: 50 * time.Millisecond, ID: "b"})
		start(t, a)
		start(t, b)
		poll.Until(t, "one of two clients leads", func() bool { return leads(a) || leads(b) })
		leader, other := a, b
		if leads(b) {
			leader, other = b, a
		}
		if leads(other) {
			t.Fatal("both clients lead")
		}
		if leads(paused) {
			t.Error("a paused client leads")
		}
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := leader.Stop(stopCtx); err != nil {
			t.Fatalf("stop the leader: %v", err)
		}
		if leads(leader) {
			t.Error("a stopped client still leads")
		}
		poll.Until(t, "the other client leads once the leader stopped", func() bool { return leads(other) })
	})
}

// TestPeriodic_ARunSlowerThanItsIntervalIsNotOverlapped: a periodic job that
// takes over two intervals to run is not started again while it runs; the
// periods it spanned add no run beside it.
func TestPeriodic_ARunSlowerThanItsIntervalIsNotOverlapped(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine, jobs.Migrator())
		const interval = time.Second
		var mu sync.Mutex
		running, most, runs := 0, 0, 0
		c, err := jobs.New(jobs.Config{DB: db, PollInterval: 50 * time.Millisecond, Periodic: []jobs.Periodic{{
			Name: "slow", Interval: interval, RunOnStart: true,
			Run: func(ctx context.Context) error {
				mu.Lock()
				running++
				runs++
				most = max(most, running)
				mu.Unlock()
				defer func() { mu.Lock(); running--; mu.Unlock() }()
				// The work: longer than two intervals, so two later periods
				// come while it runs.
				select {
				case <-time.After(2*interval + interval/2):
				case <-ctx.Done():
				}
				return nil
			},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		start(t, c)
		poll.UntilWithin(t, time.Minute, "the slow job ran twice", func() bool { mu.Lock(); defer mu.Unlock(); return runs >= 2 })
		mu.Lock()
		defer mu.Unlock()
		if most != 1 {
			t.Errorf("%d runs of the periodic job at once, want 1", most)
		}
	})
}
