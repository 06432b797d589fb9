package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

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
		var logs lockedBuffer
		cfg := storetest.Config(t, engine)
		cfg.Migrate = store.MigrateSkip
		cfg.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
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

		var infos []map[string]any
		debugs := 0
		for _, l := range logs.lines(t) {
			switch l["level"] {
			case "INFO":
				infos = append(infos, l)
			case "DEBUG":
				if l["msg"] == "applied migration" {
					debugs++
				}
			}
		}
		if len(infos) != 1 {
			t.Fatalf("info lines: %v, want one", infos)
		}
		got, _ := json.Marshal(infos[0])
		want := map[string]any{"msg": "applied migrations", "count": float64(len(applied)),
			"steward": map[string]any{"from": float64(3), "to": float64(last.Version)},
			"extra":   map[string]any{"from": float64(0), "to": float64(2)}}
		for k, v := range want {
			if w, _ := json.Marshal(v); !bytes.Equal(mustJSON(t, infos[0][k]), w) {
				t.Errorf("info line %s: %s is %s, want %s", got, k, mustJSON(t, infos[0][k]), w)
			}
		}
		if _, ok := infos[0]["duration"]; !ok {
			t.Errorf("info line %s has no duration", got)
		}
		if debugs != len(applied) {
			t.Errorf("%d debug lines \"applied migration\", want one per migration applied (%d)", debugs, len(applied))
		}

		logs.reset()
		if _, err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if l := logs.lines(t); len(l) != 0 {
			t.Errorf("a migrate with nothing to apply logged %v", l)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lockedBuffer collects JSON log lines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

func (b *lockedBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b.buf.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}
