package jobs_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/jobs"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// TestMigrate_CheckRefusesWhatIsBehindAndMigrateSaysWhatItApplied follows a
// fresh database through what `steward server --migrate=check` and
// `steward migrate` do: check refuses it, naming every pending migration
// (Steward's and River's) and creating nothing; a migrate applies exactly
// those; a second applies none; check then opens it. A schema a newer
// build migrated further (a version this build does not know) opens too.
func TestMigrate_CheckRefusesWhatIsBehindAndMigrateSaysWhatItApplied(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cfg := storetest.Config(t, engine)
		cfg.Migrators = []store.Migrator{jobs.Migrator()}

		cfg.Migrate = store.MigrateCheck
		_, err := store.Open(ctx, cfg)
		var behind *store.BehindError
		if !errors.As(err, &behind) {
			t.Fatalf("check on a fresh database: err = %v, want a BehindError", err)
		}
		pending := behind.Pending
		if !slices.ContainsFunc(pending, func(m store.Migration) bool { return m.Component == "steward" && m.Version == 1 }) ||
			!slices.ContainsFunc(pending, func(m store.Migration) bool { return m.Component == "river" }) {
			t.Fatalf("pending = %v, want Steward's from 1 and River's", pending)
		}

		cfg.Migrate = store.MigrateSkip
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("open without migrating: %v", err)
		}
		defer db.Close()
		again, err := db.PendingMigrations(ctx, cfg.Migrators...)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(versions(again), versions(pending)) {
			t.Errorf("the check changed the database: pending %v after it, %v before", versions(again), versions(pending))
		}

		applied, err := db.Migrate(ctx, cfg.Migrators...)
		if err != nil {
			t.Fatalf("migrate: %v", err)
		}
		if !slices.Equal(versions(applied), versions(pending)) {
			t.Errorf("migrate applied %v, want what was pending: %v", versions(applied), versions(pending))
		}
		if applied, err = db.Migrate(ctx, cfg.Migrators...); err != nil || len(applied) != 0 {
			t.Errorf("second migrate: applied %v, err %v; want nothing", applied, err)
		}

		// A newer build's migration, applied beside this build's.
		if _, err := db.Exec(ctx, "INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, true)"); err != nil {
			t.Fatal(err)
		}
		cfg.Migrate = store.MigrateCheck
		checked, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("check on a migrated database (and a newer build's migration): %v", err)
		}
		checked.Close()
		cfg.Migrate = store.MigrateAuto
		auto, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("auto on a database a newer build migrated: %v", err)
		}
		auto.Close()
	})
}

func versions(ms []store.Migration) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.String()
	}
	return out
}
