package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

//go:embed migrations
var migrationsFS embed.FS

// migrationLockKey is the PostgreSQL advisory lock held while migrating, so
// replicas that start together run each migration once.
const migrationLockKey = 0x5374657761726401 // "Steward\x01"

// Migrator runs a component's own migrations (River's tables) under the
// store's migration lock, after Steward's.
type Migrator func(ctx context.Context, db *DB) error

// Migrate brings the schema up to date, then runs extra migrators (River's),
// all under one lock. Open calls it with Config.Migrators; calling it again is
// a no-op when nothing is pending.
func (db *DB) Migrate(ctx context.Context, extra ...Migrator) error {
	return db.withMigrationLock(ctx, func() error {
		if err := db.gooseUp(ctx); err != nil {
			return err
		}
		for _, m := range extra {
			if err := m(ctx, db); err != nil {
				return err
			}
		}
		return nil
	})
}

func (db *DB) gooseUp(ctx context.Context) error {
	return db.withGoose(func(p *goose.Provider) error {
		results, err := p.Up(ctx)
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		for _, r := range results {
			db.logger.InfoContext(ctx, "applied migration", "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
		}
		return nil
	})
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
