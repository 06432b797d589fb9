package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Engine names a database engine.
type Engine string

// The engines Steward runs on.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// Config says which database to open.
type Config struct {
	// DatabaseURL selects PostgreSQL (postgres:// or postgresql://). Empty
	// selects SQLite in DataDir.
	DatabaseURL string
	// DataDir holds the SQLite file (steward.db). Required when DatabaseURL is empty.
	DataDir string
	// MaxReadConns bounds SQLite's read-only pool. Defaults to 4.
	MaxReadConns int
	// Migrators run after Steward's own migrations, under the same lock
	// (River's tables, from package jobs).
	Migrators []Migrator
	// Migrate says whether Open applies pending migrations (MigrateAuto,
	// the default), refuses to open with any pending (MigrateCheck), or
	// leaves them to the caller (MigrateSkip).
	Migrate MigrateMode
	// Logger receives migration messages. Defaults to discarding them.
	Logger *slog.Logger
}

// DB is an open database. It is safe for concurrent use.
//
// On SQLite, writes and transactions go through a single connection: SQLite
// allows one writer at a time, and River's SQLite driver asks for one
// connection to avoid SQLITE_BUSY. Reads outside a transaction use a separate
// read-only pool, so WAL readers do not queue behind writers.
type DB struct {
	engine Engine
	logger *slog.Logger

	liteWrite *sql.DB
	liteRead  *sql.DB
	// The SQLite pools' prepared statements.
	writeStmts *stmtCache
	readStmts  *stmtCache
	// group runs SQLite's write transactions (group commit).
	group *groupCommitter
	pool  *pgxpool.Pool
	// observer, when set, is told of each statement (ObserveStatements).
	observer atomic.Pointer[StatementObserver]
}

// StatementObserver is told of a statement before it runs: the engine's
// text and the arguments as given.
type StatementObserver func(query string, args []any)

// ObserveStatements has observe told of every statement db runs from now
// on, in transactions or not; nil stops it. It is for tests that check
// every statement a request runs (its plan, issue 46): a partial index
// that cannot serve its query shows only in the statement as it runs. It
// costs each statement an atomic load.
func (db *DB) ObserveStatements(observe StatementObserver) {
	if observe == nil {
		db.observer.Store(nil)
		return
	}
	db.observer.Store(&observe)
}

// observe tells the observer, if any, of a statement. db may be nil (a Tx
// built by hand).
func (db *DB) observe(query string, args []any) {
	if db == nil {
		return
	}
	if o := db.observer.Load(); o != nil {
		(*o)(query, args)
	}
}

// Open connects to the database described by cfg and runs every migration
// (Steward's and River's) under a lock, so that replicas starting together
// migrate once.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	db := &DB{logger: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))}
	if cfg.DatabaseURL != "" {
		u, err := url.Parse(cfg.DatabaseURL)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, fmt.Errorf("store: database URL must be postgres://…")
		}
		poolCfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
		if err != nil {
			return nil, fmt.Errorf("store: parse database URL: %w", err)
		}
		db.engine = Postgres
		if !u.Query().Has("pool_max_conns") {
			// pgx's default (the CPU count, at least 4) is too few for a
			// server whose requests each hold a transaction: bursts of them
			// then wait on the pool rather than on the database.
			poolCfg.MaxConns = int32(max(16, 4*runtime.NumCPU()))
		}
		if db.pool, err = pgxpool.NewWithConfig(ctx, poolCfg); err != nil {
			return nil, fmt.Errorf("store: connect to postgres: %w", err)
		}
	} else {
		if cfg.DataDir == "" {
			return nil, errors.New("store: a data dir or a database URL is required")
		}
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("store: create data dir: %w", err)
		}
		path := filepath.Join(cfg.DataDir, "steward.db")
		db.engine = SQLite
		var err error
		registerLiteDriver()
		if db.liteWrite, err = sql.Open(liteDriverName, liteDSN(path, false)); err != nil {
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
		db.liteWrite.SetMaxOpenConns(1)
		if db.liteRead, err = sql.Open(liteDriverName, liteDSN(path, true)); err != nil {
			db.liteWrite.Close()
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
		db.liteRead.SetMaxOpenConns(cmp.Or(cfg.MaxReadConns, 4))
		// database/sql keeps 2 idle connections by default: under load the
		// others were closed after each use and opened again (pragmas run,
		// statements prepared anew), 8% of the CPU in a profile.
		db.liteRead.SetMaxIdleConns(cmp.Or(cfg.MaxReadConns, 4))
		db.writeStmts, db.readStmts = newStmtCache(db.liteWrite), newStmtCache(db.liteRead)
		db.group = newGroupCommitter(db)
	}
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := db.migrateOnOpen(ctx, cfg); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// migrateOnOpen does what cfg.Migrate asks of a schema behind this build.
func (db *DB) migrateOnOpen(ctx context.Context, cfg Config) error {
	switch cfg.Migrate {
	case "", MigrateAuto:
		_, err := db.Migrate(ctx, cfg.Migrators...)
		return err
	case MigrateCheck:
		pending, err := db.PendingMigrations(ctx, cfg.Migrators...)
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			return &BehindError{Pending: pending}
		}
		return nil
	case MigrateSkip:
		return nil
	default:
		return fmt.Errorf("store: unknown migrate mode %q (want auto, check or skip)", cfg.Migrate)
	}
}

func liteDSN(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
		// The writer's page cache is the one no other connection's writes
		// invalidate; at SQLite's default of 2 MB it already missed at a few
		// thousand orders (3–4 KB of pages each).
		q.Add("_pragma", "cache_size(-65536)")
		// Group commit runs each transaction in a savepoint, and SQLite keeps
		// a savepoint's original pages in a statement journal: a temporary
		// file, one pwrite per page (8% of the CPU under order load), unless
		// temporary storage is in memory. It holds only the pages one
		// group changes, and nothing in it needs to survive a crash.
		q.Add("_pragma", "temp_store(MEMORY)")
	}
	return "file:" + path + "?" + q.Encode()
}

// Engine reports which engine the database runs on.
func (db *DB) Engine() Engine { return db.engine }

// SQLDB returns the SQLite write pool (nil on PostgreSQL), for River's driver.
func (db *DB) SQLDB() *sql.DB { return db.liteWrite }

// PgxPool returns the PostgreSQL pool (nil on SQLite), for River's driver.
func (db *DB) PgxPool() *pgxpool.Pool { return db.pool }

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if db.pool != nil {
		return db.pool.Ping(ctx)
	}
	if err := db.liteWrite.PingContext(ctx); err != nil {
		return err
	}
	return db.liteRead.PingContext(ctx)
}

// Close closes every connection. It is safe to call once the users are stopped.
func (db *DB) Close() error {
	if db.pool != nil {
		db.pool.Close()
		return nil
	}
	db.group.close()
	db.writeStmts.close()
	db.readStmts.close()
	return errors.Join(db.liteRead.Close(), db.liteWrite.Close())
}

// Exec runs one statement in its own transaction.
func (db *DB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if db.pool != nil {
		db.observe(query, args)
		return pgExec(ctx, db.pool, query, args)
	}
	// A write of its own joins the next group commit like any transaction.
	var n int64
	err := db.group.run(ctx, func(tx *Tx) error {
		var err error
		n, err = tx.Exec(ctx, query, args...)
		return err
	})
	return n, err
}

// Query runs a read. On SQLite it uses the read-only pool, so it must not write.
func (db *DB) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	db.observe(query, args)
	if db.pool != nil {
		return pgQuery(ctx, db.pool, query, args)
	}
	return liteQuery(ctx, cachedDB{db.liteRead, db.readStmts}, query, args)
}

// QueryRow runs a read expected to return at most one row (read-only pool on SQLite).
func (db *DB) QueryRow(ctx context.Context, query string, args ...any) *Row {
	db.observe(query, args)
	if db.pool != nil {
		return pgQueryRow(ctx, db.pool, query, args)
	}
	return liteQueryRow(ctx, cachedDB{db.liteRead, db.readStmts}, query, args)
}

// rollbackTimeout bounds a rollback that runs after its request was cancelled.
const rollbackTimeout = 5 * time.Second

// Tx is a database transaction. It is not safe for concurrent use.
type Tx struct {
	// db is the DB the transaction is of (its statement observer).
	db     *DB
	lite   *sql.Tx
	cached *cachedTx
	pg     pgx.Tx
	// grouped is set in a group commit: statements ignore the caller's
	// cancellation (see groupCommitter).
	grouped bool
	// pending holds the group's appended rows (see Appender).
	pending []pendingRow
	// committed holds what runs once the transaction commits (AfterCommit).
	committed []func()
}

// AfterCommit has f run once the transaction has committed, and never if
// it rolls back (a member of a group commit that fails drops its own). f
// runs on the committing goroutine, which may be the one every SQLite write
// goes through: it must not block or touch the store (e.g. a non-blocking
// send that wakes a worker).
func (tx *Tx) AfterCommit(f func()) {
	tx.committed = append(tx.committed, f)
}

// runCommitted runs the AfterCommit functions of a committed transaction.
func (tx *Tx) runCommitted() {
	for _, f := range tx.committed {
		f()
	}
}

// Exec runs a statement in the transaction.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tx.db.observe(query, args)
	if tx.pg != nil {
		return pgExec(ctx, tx.pg, query, args)
	}
	return liteExec(tx.liteCtx(ctx), tx.cached, query, args)
}

// Query runs a statement that returns rows in the transaction.
func (tx *Tx) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	tx.db.observe(query, args)
	if tx.pg != nil {
		return pgQuery(ctx, tx.pg, query, args)
	}
	return liteQuery(tx.liteCtx(ctx), tx.cached, query, args)
}

// QueryRow runs a statement returning at most one row in the transaction.
func (tx *Tx) QueryRow(ctx context.Context, query string, args ...any) *Row {
	tx.db.observe(query, args)
	if tx.pg != nil {
		return pgQueryRow(ctx, tx.pg, query, args)
	}
	return liteQueryRow(tx.liteCtx(ctx), tx.cached, query, args)
}

// liteCtx drops ctx's cancellation in a group commit.
func (tx *Tx) liteCtx(ctx context.Context) context.Context {
	if tx.grouped {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// Engine reports which engine the transaction runs on.
func (tx *Tx) Engine() Engine {
	if tx.pg != nil {
		return Postgres
	}
	return SQLite
}

// SQLTx returns the SQLite transaction (nil on PostgreSQL), for River's InsertTx.
func (tx *Tx) SQLTx() *sql.Tx { return tx.lite }

// PgxTx returns the PostgreSQL transaction (nil on SQLite), for River's InsertTx.
func (tx *Tx) PgxTx() pgx.Tx { return tx.pg }

// InTx runs fn in a transaction and commits it when fn returns nil. Any error,
// or a panic, rolls it back. On SQLite the transaction takes the write lock at
// BEGIN (_txlock=immediate), so two transactions never deadlock upgrading. On
// PostgreSQL a transaction chosen as a deadlock's victim (or failing to
// serialise) is run again, a few times, after a short random pause: domains
// lock rows in their own order (a status report takes the instance, then the
// resource, then the order; a transfer the order first), and the database
// breaks the cycle. fn must therefore be safe to run again: it must keep its
// effects to tx and to values it sets afresh on each run.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	fn, finished := hooked(ctx, fn)
	defer func() { finished(err) }()
	for attempt := 1; ; attempt++ {
		err = db.inTxOnce(ctx, fn)
		if attempt == maxTxAttempts || !retryable(err) {
			return err
		}
		pause := time.Duration(attempt) * time.Duration(1+rand.IntN(10)) * time.Millisecond
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// maxTxAttempts bounds the runs of a transaction that keeps losing deadlocks.
const maxTxAttempts = 5

// retryable reports whether a transaction failed only because of others
// running at the same time: a PostgreSQL deadlock or serialisation failure.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

func (db *DB) inTxOnce(ctx context.Context, fn func(tx *Tx) error) (err error) {
	if db.group != nil {
		return db.group.run(ctx, fn)
	}
	tx := &Tx{db: db}
	if db.pool != nil {
		if tx.pg, err = db.pool.Begin(ctx); err != nil {
			return fmt.Errorf("store: begin: %w", err)
		}
	} else {
		if tx.lite, err = db.liteWrite.BeginTx(ctx, nil); err != nil {
			return fmt.Errorf("store: begin: %w", err)
		}
		tx.cached = &cachedTx{tx: tx.lite, cache: db.writeStmts}
		defer func() {
			if len(tx.cached.missing) > 0 {
				db.writeStmts.prepareMissing(context.WithoutCancel(ctx), tx.cached.missing)
			}
		}()
	}
	defer func() {
		p := recover()
		if err != nil || p != nil {
			// The rollback must happen even when ctx was cancelled.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
			defer cancel()
			tx.rollback(rctx)
		}
		if p != nil {
			panic(p)
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if tx.pg != nil {
		err = tx.pg.Commit(ctx)
	} else {
		err = tx.lite.Commit()
	}
	if err != nil {
		return fmt.Errorf("store: commit: %w", classify(err))
	}
	tx.runCommitted()
	return nil
}

func (tx *Tx) rollback(ctx context.Context) {
	if tx.pg != nil {
		_ = tx.pg.Rollback(ctx)
		return
	}
	_ = tx.lite.Rollback()
}
