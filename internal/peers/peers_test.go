package peers

import (
	"context"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestReap_TakesOverExactlyTheDead(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine)
		r := New(Config{DB: db, Interval: 50 * time.Millisecond, TTL: time.Minute})
		var mu sync.Mutex
		var reaped []string
		r.AddReaper("record", func(_ context.Context, _ *store.Tx, dead []string) error {
			mu.Lock()
			defer mu.Unlock()
			reaped = append(reaped, dead...)
			return nil
		})
		now := store.Now(nil)
		for _, p := range []struct {
			id, host string
			pid      int
			expires  time.Time
		}{
			{"here-dead-pid", r.host, deadPID(t), now.Add(time.Hour)},     // killed: its pid is gone
			{"here-my-pid", r.host, r.pid, now.Add(time.Hour)},            // an earlier incarnation of this pid
			{"here-alive", r.host, 1, now.Add(-time.Hour)},                // pid 1 lives: lease does not matter here
			{"elsewhere-expired", "other-host", 1, now.Add(-time.Second)}, // lease expired
			{"elsewhere-alive", "other-host", 999999, now.Add(time.Hour)}, // lease valid: pid means nothing here
		} {
			if _, err := r.q.PeerRegister(ctx, db, PeerRegisterParams{ID: p.id, Host: p.host, Pid: int64(p.pid),
				StartedAt: now, HeartbeatAt: now, ExpiresAt: p.expires}); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := slices.Sorted(slices.Values(reaped))
		mu.Unlock()
		want := []string{"elsewhere-expired", "here-dead-pid", "here-my-pid"}
		if !slices.Equal(got, want) {
			t.Errorf("reaped at start = %v, want %v", got, want)
		}
		if again, err := r.Reap(ctx); err != nil || len(again) != 0 {
			t.Errorf("second reap = %v, %v; want nothing (rows deleted)", again, err)
		}

		// A graceful stop reaps this process itself.
		if err := r.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Contains(reaped, r.ID()) {
			t.Errorf("reaped after Stop = %v, want this process %s too", reaped, r.ID())
		}
		var n int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM steward_processes").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("%d process rows left, want the 2 live peers", n)
		}
	})
}

func TestRenew_ReRegistersAfterBeingReaped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, store.SQLite)
	r := New(Config{DB: db})
	if err := r.register(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.q.PeerDelete(ctx, db, []string{r.ID()}); err != nil {
		t.Fatal(err)
	}
	if err := r.renew(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM steward_processes WHERE id = ?", r.ID()).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows for this process after renew = %d, %v; want 1", n, err)
	}
}
