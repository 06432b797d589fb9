package server

import (
	"cmp"
	"context"
	"log/slog"

	"github.com/stewardhq/steward/internal/store"
)

// MigrateConfig says which database `steward migrate` works on.
type MigrateConfig struct {
	DataDir, DatabaseURL string
	// DryRun lists what is pending and applies nothing.
	DryRun bool
	// Logger hears each migration as it is applied. Defaults to discarding.
	Logger *slog.Logger
}

// Migrate brings a server's database up to this build's schema (Steward's
// tables and River's) without starting a server, under the lock replicas
// migrate under, and returns what it applied: nothing when the schema is
// current. With DryRun it returns what is pending instead.
func Migrate(ctx context.Context, cfg MigrateConfig) ([]store.Migration, error) {
	migrators := Migrators()
	db, err := store.Open(ctx, store.Config{DatabaseURL: cfg.DatabaseURL, DataDir: cmp.Or(cfg.DataDir, "steward-data"),
		Migrate: store.MigrateSkip, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if cfg.DryRun {
		return db.PendingMigrations(ctx, migrators...)
	}
	return db.Migrate(ctx, migrators...)
}
