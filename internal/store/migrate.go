package store

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

//go:embed migrations
var migrationsFS embed.FS

// migrationLockKey is the PostgreSQL advisory lock held while migrating, so
// replicas that start together run each migration once.
const migrationLockKey = 0x5374657761726401 // "Steward\x01"

// Migrator is a component's own migrations (River's tables), run under the
// store's migration lock after Steward's.
type Migrator struct {
	// Component names it in what Migrate and PendingMigrations report.
	Component string
	// Up applies what is pending and returns what it applied (their
	// Component is filled in by Migrate).
	Up func(ctx context.Context, db *DB) ([]Migration, error)
	// Pending returns what is not applied yet, changing nothing.
	Pending func(ctx context.Context, db *DB) ([]Migration, error)
}

// Migration is one migration: of Steward's schema (Component "steward") or
// of a Migrator's. Duration is set when it was just applied.
type Migration struct {
	Component string
	Version   int64
	Duration  time.Duration
}

// String is "steward 00040" or "river 6".
func (m Migration) String() string {
	if m.Component == stewardComponent {
		return fmt.Sprintf("%s %05d", m.Component, m.Version)
	}
	return fmt.Sprintf("%s %d", m.Component, m.Version)
}

// stewardComponent names Steward's own schema in a Migration.
const stewardComponent = "steward"

// MigrateMode says what Open does with a schema that is behind this build.
type MigrateMode string

const (
	// MigrateAuto applies what is pending (the default).
	MigrateAuto MigrateMode = "auto"
	// MigrateCheck refuses to open a schema with anything pending
	// (a *BehindError): an operator migrates it first (steward migrate).
	MigrateCheck MigrateMode = "check"
	// MigrateSkip neither applies nor checks: the caller migrates
	// (steward migrate reports what it applied).
	MigrateSkip MigrateMode = "skip"
)

// BehindError is Open's answer, in MigrateCheck mode, to a schema with
// migrations pending.
type BehindError struct {
	Pending []Migration
}

func (e *BehindError) Error() string {
	names := make([]string, len(e.Pending))
	for i, m := range e.Pending {
		names[i] = m.String()
	}
	return fmt.Sprintf("store: the database schema is behind this build: %d migrations pending (%s)",
		len(e.Pending), strings.Join(names, ", "))
}

// Migrate brings the schema up to date, then runs extra migrators (River's),
// all under one lock, and returns what it applied, in order. Open calls it
// with Config.Migrators; calling it again applies nothing when nothing is
// pending.
func (db *DB) Migrate(ctx context.Context, extra ...Migrator) ([]Migration, error) {
	var applied []Migration
	err := db.withMigrationLock(ctx, func() error {
		start := time.Now()
		ours, from, err := db.gooseUp(ctx)
		if err != nil {
			return err
		}
		applied = ours
		spans := []migrationSpan{{component: stewardComponent, from: from, applied: ours}}
		for _, m := range extra {
			done, err := m.Up(ctx, db)
			if err != nil {
				return err
			}
			for i := range done {
				done[i].Component = m.Component
			}
			applied = append(applied, done...)
			if len(done) > 0 {
				spans = append(spans, migrationSpan{component: m.Component, from: done[0].Version - 1, applied: done})
			}
		}
		db.logApplied(ctx, spans, time.Since(start))
		return nil
	})
	return applied, err
}

// migrationSpan is what one component's migrations applied: from the
// version it was at (a Migrator's versions are consecutive, as River's
// are) to its last applied.
type migrationSpan struct {
	component string
	from      int64
	applied   []Migration
}

// logApplied logs a migration that applied anything in one line at info
// (how many, each component from which version to which, how long), and
// each migration at debug.
func (db *DB) logApplied(ctx context.Context, spans []migrationSpan, took time.Duration) {
	attrs := []any{}
	count := 0
	for _, s := range spans {
		if len(s.applied) == 0 {
			continue
		}
		for _, m := range s.applied {
			db.logger.DebugContext(ctx, "applied migration", "migration_component", m.Component, "version", m.Version,
				"duration", m.Duration)
		}
		count += len(s.applied)
		attrs = append(attrs, slog.Group(s.component, "from", s.from, "to", s.applied[len(s.applied)-1].Version))
	}
	if count == 0 {
		return
	}
	db.logger.InfoContext(ctx, "applied migrations", append([]any{"count", count, "duration", took.Round(time.Millisecond)}, attrs...)...)
}

// PendingMigrations lists what Migrate would apply, changing nothing.
func (db *DB) PendingMigrations(ctx context.Context, extra ...Migrator) ([]Migration, error) {
	var pending []Migration
	err := db.withGoose(func(p *goose.Provider) error {
		versions, err := db.gooseApplied(ctx)
		if err != nil {
			return err
		}
		for _, src := range p.ListSources() {
			if !versions[src.Version] {
				pending = append(pending, Migration{Component: stewardComponent, Version: src.Version})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, m := range extra {
		left, err := m.Pending(ctx, db)
		if err != nil {
			return nil, err
		}
		for _, l := range left {
			l.Component = m.Component
			pending = append(pending, l)
		}
	}
	return pending, nil
}

// gooseApplied reads the versions goose recorded as applied; none when its
// table does not exist yet (a fresh database), which a read must not create.
func (db *DB) gooseApplied(ctx context.Context) (map[int64]bool, error) {
	exists := "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'"
	if db.engine == Postgres {
		exists = "SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = 'goose_db_version' AND schemaname = current_schema()"
	}
	var n int
	if err := db.QueryRow(ctx, exists).Scan(&n); err != nil {
		return nil, fmt.Errorf("store: schema version: %w", err)
	}
	applied := map[int64]bool{}
	if n == 0 {
		return applied, nil
	}
	rows, err := db.Query(ctx, "SELECT version_id FROM goose_db_version WHERE is_applied")
	if err != nil {
		return nil, fmt.Errorf("store: schema version: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("store: schema version: %w", err)
		}
		applied[v] = true
	}
	return applied, rows.Err()
}

// gooseUp applies Steward's pending migrations and returns them, with the
// version the schema was at before (0: none).
func (db *DB) gooseUp(ctx context.Context) (applied []Migration, from int64, err error) {
	err = db.withGoose(func(p *goose.Provider) error {
		results, err := p.Up(ctx)
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		for _, r := range results {
			applied = append(applied, Migration{Component: stewardComponent, Version: r.Source.Version, Duration: r.Duration})
		}
		if len(applied) > 0 {
			for _, src := range p.ListSources() {
				if src.Version < applied[0].Version {
					from = max(from, src.Version)
				}
			}
		}
		return nil
	})
	return applied, from, err
}

// MigrateTo moves Steward's schema up or down to version, under the
// migration lock, for tests of a migration's upgrade of existing rows. A
// server only ever migrates up (Migrate).
func (db *DB) MigrateTo(ctx context.Context, version int64) error {
	return db.withMigrationLock(ctx, func() error {
		return db.withGoose(func(p *goose.Provider) error {
			current, err := p.GetDBVersion(ctx)
			switch {
			case err != nil:
				return fmt.Errorf("store: schema version: %w", err)
			case version < current:
				_, err = p.DownTo(ctx, version)
			case version > current:
				_, err = p.UpTo(ctx, version)
			}
			if err != nil {
				return fmt.Errorf("store: migrate to %d: %w", version, err)
			}
			return nil
		})
	})
}

// withGoose runs fn with a goose provider of the engine's migrations.
func (db *DB) withGoose(fn func(*goose.Provider) error) error {
	dir, err := fs.Sub(migrationsFS, "migrations/"+string(db.engine))
	if err != nil {
		return err
	}
	dialect := goose.DialectSQLite3
	sqlDB := db.liteWrite
	if db.engine == Postgres {
		dialect = goose.DialectPostgres
		sqlDB = stdlib.OpenDBFromPool(db.pool)
		defer sqlDB.Close()
	}
	p, err := goose.NewProvider(dialect, sqlDB, dir, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	return fn(p)
}

// withMigrationLock serialises migrations across processes. PostgreSQL takes a
// session advisory lock on one pinned connection. SQLite needs none: every
// migration runs in an immediate transaction on the single write connection,
// and goose re-checks the version table inside it.
func (db *DB) withMigrationLock(ctx context.Context, fn func() error) error {
	if db.engine != Postgres {
		return fn()
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: migration lock: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrationLockKey)); err != nil {
		return fmt.Errorf("store: migration lock: %w", err)
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		_, _ = conn.Exec(uctx, "SELECT pg_advisory_unlock($1)", int64(migrationLockKey))
	}()
	return fn()
}

// MigrationsDigest identifies engine's migrations in this build: a hash of
// their files' names and contents. Two builds with the same digest make
// the same schema.
func MigrationsDigest(engine Engine) (string, error) {
	h := sha256.New()
	dir := "migrations/" + string(engine)
	err := fs.WalkDir(migrationsFS, dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrationsFS, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("store: migrations digest: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
