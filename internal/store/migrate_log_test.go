package store_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stewardhq/steward/internal/logtest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 46: a migrating start logs one info line (how many were applied,
// from which version to which, how long it took); each migration is a
// debug line.
func TestMigrate_LogsOneInfoLineAndEachMigrationAtDebug(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		var logs logtest.Buffer
		cfg := storetest.Config(t, engine)
		cfg.Migrate = store.MigrateSkip
		cfg.Logger = logs.Logger(slog.LevelDebug)
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.MigrateTo(ctx, 3); err != nil {
			t.Fatal(err)
		}
		extra := store.Migrator{Component: "extra", Up: func(context.Context, *store.DB) ([]store.Migration, error) {
			return []store.Migration{{Version: 1}, {Version: 2}}, nil
		}}
		applied, err := db.Migrate(ctx, extra)
		if err != nil {
			t.Fatal(err)
		}
		last := applied[len(applied)-3] // Steward's last, before extra's two

		var infos []logtest.Line
		for _, l := range logs.Lines(t) {
			if l.Level() == "INFO" {
				infos = append(infos, l)
			}
		}
		if len(infos) != 1 {
			t.Fatalf("info lines: %v, want one", infos)
		}
		got, want := infos[0], map[string]any{"msg": "applied migrations", "count": len(applied),
			"steward": map[string]any{"from": 3, "to": last.Version}, "extra": map[string]any{"from": 0, "to": 2}}
		for k, v := range want {
			if g, w := jsonOf(t, got[k]), jsonOf(t, v); g != w {
				t.Errorf("info line %v: %s is %s, want %s", got, k, g, w)
			}
		}
		if _, ok := got["duration"]; !ok {
			t.Errorf("info line %v has no duration", got)
		}
		debugs := logs.Matching(t, "applied migration")
		if len(debugs) != len(applied) || debugs[0].Level() != "DEBUG" {
			t.Errorf("lines \"applied migration\": %v, want one per migration applied (%d), at debug", debugs, len(applied))
		}

		logs.Reset()
		if _, err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if l := logs.Lines(t); len(l) != 0 {
			t.Errorf("a migrate with nothing to apply logged %v", l)
		}
	})
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
