// Package jobs runs Steward's durable background work on River (DESIGN §5):
// retries with backoff, periodic jobs, and one leader among replicas for
// singleton work. It is the only package that builds a River client; domains
// write River workers and enqueue only through [Client.InsertTx], inside the
// transaction of the state change that causes the job (the outbox rule).
//
// River's SQLite driver works on *sql.Tx and its PostgreSQL driver on pgx.Tx;
// Client hides which one runs, so domains see only store.Tx.
//
// It keeps to River's public API except for the statements in sql/*/reap.sql
// (taking over a dead process's jobs and leadership at once, and the plain
// insert on SQLite); docs/jobs.md says why River's API cannot do them and
// what a River upgrade must check.
package jobs

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen -river
//go:embed sql
var sqlFS embed.FS

// engineQueries holds the statements of both engines: Reap gets only a Tx.
var engineQueries = map[store.Engine]*queries{
	store.SQLite:   newQueries(store.SQLite),
	store.Postgres: newQueries(store.Postgres),
}

// Workers is the registry domains add their River workers to
// (river.AddWorker(workers, w)) before the Client is built.
type Workers = river.Workers

// NewWorkers returns an empty registry.
func NewWorkers() *Workers { return river.NewWorkers() }

// Periodic is a function run on an interval, on the leader replica only.
type Periodic struct {
	// Name identifies the job; it must be unique.
	Name string
	// Interval between runs.
	Interval time.Duration
	// Run does the work; an error is retried by River with backoff.
	Run func(ctx context.Context) error
	// RunOnStart runs the job as soon as the leader starts (a new leader
	// too, unless a run is still waiting or running: a periodic job must be
	// safe to run again early).
	RunOnStart bool
}

// QueueProviders is the queue of the jobs that call service providers.
// Their workers mostly wait on the network, so it runs many at once
// ([Config.ProviderWorkers]) beside the default queue.
const QueueProviders = "providers"

// DefaultProviderWorkers is [Config.ProviderWorkers]'s default: with a
// provider answering in 1s, 1,000 creates per second.
const DefaultProviderWorkers = 1000

// Config configures a Client. DB is required.
type Config struct {
	DB *store.DB
	// Logger receives River's lines: its info lines at debug (they are
	// routine), its warnings and errors as such. Defaults to discarding.
	Logger *slog.Logger
	// ID names this process to River (the client id recorded on the jobs it
	// fetches), so that [Reap] can find the jobs of a dead process. Use the
	// process's peers id. Defaults to one River generates.
	ID string
	// Workers holds the domains' workers. Defaults to an empty registry.
	Workers *Workers
	// Periodic lists the periodic jobs.
	Periodic []Periodic
	// MaxWorkers bounds concurrent jobs of the default queue in this
	// process. Defaults to 10.
	MaxWorkers int
	// ProviderWorkers bounds concurrent jobs of [QueueProviders] in this
	// process: provider calls in flight. Defaults to DefaultProviderWorkers.
	ProviderWorkers int
	// PollInterval is how often a replica looks for new jobs when it was not
	// notified of them. Defaults to 50ms on SQLite (which has no
	// notifications) and 1s on PostgreSQL.
	PollInterval time.Duration
	// JobTimeout bounds one attempt of a job. Defaults to 1m.
	JobTimeout time.Duration
	// RescueAfter is when River's own rescuer takes a job still running
	// for stuck (a process that is alive but whose job hangs past its
	// timeout). A dead process's jobs are taken over sooner, by [Reap].
	// Defaults to JobTimeout + 1m.
	RescueAfter time.Duration
	// Paused makes Start run nothing: jobs are queued and stay queued until
	// a client that is not paused starts (maintenance, and tests that show
	// queued work survives a restart).
	Paused bool
}

// Client enqueues and runs jobs. It is safe for concurrent use.
type Client struct {
	lite   *river.Client[*sql.Tx]
	pg     *river.Client[pgx.Tx]
	paused bool
	db     *store.DB
	q      *queries
}

// New builds a Client; it runs nothing until Start.
func New(cfg Config) (*Client, error) {
	if cfg.DB == nil {
		return nil, errors.New("jobs: Config.DB is required")
	}
	workers := cfg.Workers
	if workers == nil {
		workers = NewWorkers()
	}
	periodic, err := registerPeriodic(workers, cfg.Periodic)
	if err != nil {
		return nil, err
	}
	timeout := cmp.Or(cfg.JobTimeout, time.Minute)
	rcfg := &river.Config{
		ID:     cfg.ID,
		Logger: slog.New(riverHandler{cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).Handler()}),
		Queues: map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: cmp.Or(cfg.MaxWorkers, 10)},
			QueueProviders:     {MaxWorkers: cmp.Or(cfg.ProviderWorkers, DefaultProviderWorkers)},
		},
		Workers:              workers,
		PeriodicJobs:         periodic,
		JobTimeout:           timeout,
		RescueStuckJobsAfter: cmp.Or(cfg.RescueAfter, timeout+time.Minute),
	}
	c := &Client{paused: cfg.Paused, db: cfg.DB, q: engineQueries[cfg.DB.Engine()]}
	switch cfg.DB.Engine() {
	case store.SQLite:
		rcfg.FetchPollInterval = cmp.Or(cfg.PollInterval, 50*time.Millisecond)
		rcfg.FetchCooldown = fetchCooldown(rcfg.FetchPollInterval)
		c.lite, err = river.NewClient(riversqlite.New(cfg.DB.SQLDB()), rcfg)
	default:
		rcfg.FetchPollInterval = cmp.Or(cfg.PollInterval, time.Second)
		rcfg.FetchCooldown = fetchCooldown(rcfg.FetchPollInterval)
		c.pg, err = river.NewClient(riverpgxv5.New(cfg.DB.PgxPool()), rcfg)
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return c, nil
}

// busyFetchCooldown is the least gap between two fetches of a queue that
// has work waiting. River fetches at most MaxWorkers jobs at a time, so the
// gap bounds a queue's rate: River's default 100ms held the default queue
// to 100 jobs/s (10 workers), and a burst of 1,000 order reconciles took
// 5s to drain with the workers mostly idle.
const busyFetchCooldown = 5 * time.Millisecond

// fetchCooldown keeps River's minimum gap between fetches below the poll
// interval, which River requires.
func fetchCooldown(poll time.Duration) time.Duration {
	return min(busyFetchCooldown, poll)
}

// Migrator returns River's migrations (its tables) for the store to run
// under its migration lock, after Steward's.
func Migrator() store.Migrator {
	return store.Migrator{
		Component: "river",
		Up: func(ctx context.Context, db *store.DB) ([]store.Migration, error) {
			return riverMigrate(ctx, db, false)
		},
		Pending: func(ctx context.Context, db *store.DB) ([]store.Migration, error) {
			return riverMigrate(ctx, db, true)
		},
	}
}

// riverMigrate migrates River's tables up (dryRun: only says what it would
// apply) and returns the versions applied.
func riverMigrate(ctx context.Context, db *store.DB, dryRun bool) ([]store.Migration, error) {
	var res *rivermigrate.MigrateResult
	var err error
	opts := &rivermigrate.MigrateOpts{DryRun: dryRun}
	switch db.Engine() {
	case store.SQLite:
		var m *rivermigrate.Migrator[*sql.Tx]
		if m, err = rivermigrate.New(riversqlite.New(db.SQLDB()), nil); err == nil {
			res, err = m.Migrate(ctx, rivermigrate.DirectionUp, opts)
		}
	default:
		var m *rivermigrate.Migrator[pgx.Tx]
		if m, err = rivermigrate.New(riverpgxv5.New(db.PgxPool()), nil); err == nil {
			res, err = m.Migrate(ctx, rivermigrate.DirectionUp, opts)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: migrate river: %w", err)
	}
	done := make([]store.Migration, len(res.Versions))
	for i, v := range res.Versions {
		done[i] = store.Migration{Version: int64(v.Version), Duration: v.Duration}
	}
	return done, nil
}

// Start starts working jobs (and, on the leader, the periodic ones). The
// client runs until Stop: River would stop when its start context ends, and
// a start context is usually bounded.
func (c *Client) Start(ctx context.Context) error {
	if c.paused {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	if c.lite != nil {
		return c.lite.Start(ctx)
	}
	return c.pg.Start(ctx)
}

// Leads reports whether this process is River's elected leader, the one
// that schedules the periodic jobs: a singleton that is not a periodic job
// (the sentinel's cycles) runs only where it is true. Leadership moves when
// the leader stops, or within seconds of its death ([Reap]). A paused
// client never leads.
func (c *Client) Leads(ctx context.Context) (bool, error) {
	if c.paused {
		return false, nil
	}
	id := c.id()
	n, err := c.q.JobLeads(ctx, c.db, id)
	if err != nil {
		return false, fmt.Errorf("jobs: read the leader: %w", err)
	}
	return n > 0, nil
}

// id is the client's id, as River records it on the leader row and jobs.
func (c *Client) id() string {
	if c.lite != nil {
		return c.lite.ID()
	}
	return c.pg.ID()
}

// Stop stops fetching jobs and waits for running ones until ctx ends.
func (c *Client) Stop(ctx context.Context) error {
	if c.paused {
		return nil
	}
	// Running jobs get three quarters of the time left to finish. Those
	// still running then are cancelled: River records each as errored, to
	// be retried at its next attempt, by whichever process takes it (the
	// job is handed back, not left running under a process that is gone).
	soft := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		soft, cancel = context.WithDeadline(ctx, deadline.Add(-time.Until(deadline)/4))
		defer cancel()
	}
	err := c.stop(soft, false)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		err = c.stop(ctx, true)
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// stop stops the River client: gracefully, or cancelling the jobs that run.
func (c *Client) stop(ctx context.Context, cancelJobs bool) error {
	switch {
	case c.lite != nil && cancelJobs:
		return c.lite.StopAndCancel(ctx)
	case c.lite != nil:
		return c.lite.Stop(ctx)
	case cancelJobs:
		return c.pg.StopAndCancel(ctx)
	default:
		return c.pg.Stop(ctx)
	}
}

// InsertTx enqueues a job in the caller's transaction: it runs only if the
// transaction commits.
func (c *Client) InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) error {
	var err error
	if c.lite != nil && plain(args, opts) {
		return c.insertPlainTx(ctx, tx, args, opts)
	}
	if c.lite != nil {
		_, err = c.lite.InsertTx(ctx, tx.SQLTx(), args, opts)
	} else {
		_, err = c.pg.InsertTx(ctx, tx.PgxTx(), args, opts)
	}
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	return nil
}

// Reap takes over the jobs of dead processes, in tx: the jobs they were
// running are available again at once (not after the rescue window), and
// a dead leader resigns so that a live client is elected without waiting
// for its lease. Register it with peers.Registry.AddReaper. River's public
// API can do neither (docs/jobs.md): these statements write its tables.
func Reap(ctx context.Context, tx *store.Tx, dead []string) error {
	q := engineQueries[tx.Engine()]
	if _, err := q.JobRequeueOfDead(ctx, tx, dead); err != nil {
		return fmt.Errorf("requeue the jobs of %v: %w", dead, err)
	}
	if _, err := q.JobLeaderOfDeadResign(ctx, tx, dead); err != nil {
		return fmt.Errorf("resign the leadership of %v: %w", dead, err)
	}
	return nil
}

// Pending reports whether a job of kind whose argument field equals value
// is still to be worked: queued, scheduled, retrying or running. A domain's
// sweep uses it to tell work in progress from work whose job River gave up
// on (discarded after a panic or a rescue), which must be finished by hand.
// It asks River's public job list; q is read in when it is a transaction.
func (c *Client) Pending(ctx context.Context, q store.Querier, kind, field, value string) (bool, error) {
	params := river.NewJobListParams().
		States(rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled).
		Kinds(kind).
		// ->> with a key reads one member of the arguments on both engines.
		Where("args ->> @arg_field = @arg_value", river.NamedArgs{"arg_field": field, "arg_value": value}).
		First(1)
	var (
		res *river.JobListResult
		err error
	)
	tx, inTx := q.(*store.Tx)
	switch {
	case c.lite != nil && inTx:
		res, err = c.lite.JobListTx(ctx, tx.SQLTx(), params)
	case c.lite != nil:
		res, err = c.lite.JobList(ctx, params)
	case inTx:
		res, err = c.pg.JobListTx(ctx, tx.PgxTx(), params)
	default:
		res, err = c.pg.JobList(ctx, params)
	}
	if err != nil {
		return false, fmt.Errorf("look up %s jobs: %w", kind, err)
	}
	return len(res.Jobs) > 0, nil
}

// plain reports whether a job needs nothing of River's insert beyond the
// row: no uniqueness, schedule, tags, metadata or per-kind options.
func plain(args river.JobArgs, opts *river.InsertOpts) bool {
	if _, ok := args.(river.JobArgsWithInsertOpts); ok {
		return false
	}
	return opts == nil || (reflect.ValueOf(opts.UniqueOpts).IsZero() && opts.ScheduledAt.IsZero() && len(opts.Tags) == 0 &&
		len(opts.Metadata) == 0 && !opts.Pending)
}

// insertPlainTx writes a plain job's row through the store, as a prepared
// statement: River's SQLite driver parses its insert anew on every call,
// which was a fifth of the server's CPU in an order-create profile.
func (c *Client) insertPlainTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) error {
	encoded, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("enqueue %s: encode args: %w", args.Kind(), err)
	}
	maxAttempts, priority, queue := river.MaxAttemptsDefault, river.PriorityDefault, river.QueueDefault
	if opts != nil {
		maxAttempts = cmp.Or(opts.MaxAttempts, maxAttempts)
		priority = cmp.Or(opts.Priority, priority)
		queue = cmp.Or(opts.Queue, queue)
	}
	if _, err := c.q.JobInsertPlain(ctx, tx, JobInsertPlainParams{Args: string(encoded), Kind: args.Kind(),
		MaxAttempts: int64(maxAttempts), Priority: int64(priority), Queue: queue}); err != nil {
		return fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	return nil
}
