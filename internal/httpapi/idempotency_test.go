package httpapi_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// clock is a settable time source for retention and lock expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func idempotentHarness(t *testing.T, engine store.Engine) (*harness, *httpapi.IdempotencyStore, *clock) {
	t.Helper()
	clk := &clock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	ids := httpapi.NewIdempotencyStore(httpapi.IdempotencyConfig{
		DB: storetest.Open(t, engine), Now: clk.Now, Retention: 24 * time.Hour, LockTimeout: time.Minute,
		Holder: "process-1",
	})
	return newHarness(t, httpapi.Config{Idempotency: ids}), ids, clk
}

func TestIdempotency_ReplayReusedAndPrincipals(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		h, _, _ := idempotentHarness(t, engine)

		first := h.do(t, "POST", "/api/v1/widgets", `{"name":"a"}`, "Idempotency-Key", "k1")
		if first.status != 201 {
			t.Fatalf("first: %d %s", first.status, first.body)
		}
		again := h.do(t, "POST", "/api/v1/widgets", `{"name":"a"}`, "Idempotency-Key", "k1")
		if again.status != 201 || string(again.body) != string(first.body) ||
			again.header.Get("Location") != "/api/v1/widgets/a" || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay = %d %s %v, want the first answer %s", again.status, again.body, again.header, first.body)
		}
		if n := h.calls.Load(); n != 1 {
			t.Fatalf("handler ran %d times for one key, want 1", n)
		}

		reused := h.do(t, "POST", "/api/v1/widgets", `{"name":"b"}`, "Idempotency-Key", "k1")
		if reused.status != 422 || reused.reason(t) != "IDEMPOTENCY_KEY_REUSED" {
			t.Fatalf("same key, other body = %d %s", reused.status, reused.body)
		}

		// Keys are per principal: bob's k1 is not alice's.
		bob := h.do(t, "POST", "/api/v1/widgets", `{"name":"b"}`, "Idempotency-Key", "k1", "Authorization", "Bearer bob")
		if bob.status != 201 || h.calls.Load() != 2 {
			t.Fatalf("another principal's key = %d %s, calls %d", bob.status, bob.body, h.calls.Load())
		}

		// An error answer is replayed too, whatever its status.
		e1 := h.do(t, "POST", "/api/v1/widgets", `{"name":"missing"}`, "Idempotency-Key", "k2")
		e2 := h.do(t, "POST", "/api/v1/widgets", `{"name":"missing"}`, "Idempotency-Key", "k2")
		if e1.status != 404 || e2.status != 404 || string(e1.body) != string(e2.body) || h.calls.Load() != 3 {
			t.Fatalf("error replay: %d %s / %d %s, calls %d", e1.status, e1.body, e2.status, e2.body, h.calls.Load())
		}
		if e2.header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("replayed problem has Content-Type %q", e2.header.Get("Content-Type"))
		}
	})
}

func TestIdempotency_InFlightKeyIsRefusedAndExpiredKeyIsFree(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		h, _, clk := idempotentHarness(t, engine)
		done := h.startBlocked(t, "slow")

		// While the first request runs, the same key answers 409.
		if a := h.do(t, "POST", "/api/v1/slow-widgets", `{}`, "Idempotency-Key", "slow"); a.status != 409 || a.reason(t) != "IDEMPOTENCY_KEY_IN_USE" {
			t.Fatalf("in flight: %d %s", a.status, a.body)
		}
		close(h.gate)
		if a := <-done; a.status != 201 {
			t.Fatalf("first request: %d %s", a.status, a.body)
		}
		if a := h.do(t, "POST", "/api/v1/slow-widgets", `{}`, "Idempotency-Key", "slow"); a.status != 201 || a.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("after completion: %d %s", a.status, a.body)
		}
		if n := h.calls.Load(); n != 1 {
			t.Fatalf("handler ran %d times, want 1", n)
		}

		// A record past its retention no longer binds the key.
		clk.Add(25 * time.Hour)
		if a := h.do(t, "POST", "/api/v1/slow-widgets", `{}`, "Idempotency-Key", "slow"); a.status != 201 || a.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("expired key: %d %v", a.status, a.header)
		}
		if n := h.calls.Load(); n != 2 {
			t.Fatalf("handler ran %d times, want 2 after expiry", n)
		}
	})
}

func TestIdempotency_PruneDeletesExpiredRecords(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		h, ids, clk := idempotentHarness(t, engine)
		for _, k := range []string{"a", "b", "c"} {
			if a := h.do(t, "POST", "/api/v1/widgets", `{"name":"`+k+`"}`, "Idempotency-Key", k); a.status != 201 {
				t.Fatalf("%s: %d", k, a.status)
			}
		}
		if n, err := ids.Prune(context.Background()); err != nil || n != 0 {
			t.Fatalf("prune before expiry = %d, %v; want 0", n, err)
		}
		clk.Add(24*time.Hour + time.Second)
		if n, err := ids.Prune(context.Background()); err != nil || n != 3 {
			t.Fatalf("prune after expiry = %d, %v; want 3", n, err)
		}
	})
}

func TestIdempotency_AbandonedKeyIsTakenOverAfterLockTimeout(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		h, _, clk := idempotentHarness(t, engine)
		done := h.startBlocked(t, "stuck")
		// Past the lock timeout the first request counts as abandoned (its
		// process died); a retry with the same request runs again...
		clk.Add(2 * time.Minute)
		if a := h.do(t, "POST", "/api/v1/slow-widgets", `{}`, "Idempotency-Key", "stuck"); a.status != 201 || a.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("retry of an abandoned key: %d %s", a.status, a.body)
		}
		// ...but another request under the same key is still refused.
		if a := h.do(t, "POST", "/api/v1/slow-widgets", `{"other":1}`, "Idempotency-Key", "stuck"); a.status != 422 {
			t.Fatalf("other body after takeover: %d %s", a.status, a.body)
		}
		close(h.gate)
		<-done
		if n := h.calls.Load(); n != 2 {
			t.Fatalf("handler ran %d times, want 2", n)
		}
	})
}

// TestIdempotency_DeadHoldersKeyIsFreeAtOnce: the process serving a key's
// first request died (kill -9); once a peer reaps it, a retry runs at once,
// long before the lock timeout.
func TestIdempotency_DeadHoldersKeyIsFreeAtOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		h, ids, _ := idempotentHarness(t, engine)
		done := h.startBlocked(t, "held")
		if a := h.do(t, "POST", "/api/v1/slow-widgets", `{}`, "Idempotency-Key", "held"); a.status != 409 {
			t.Fatalf("while its holder lives: %d %s, want 409", a.status, a.body)
		}
		ctx := context.Background()
		// Another process dying releases nothing of ours.
		if err := ids.DB().InTx(ctx, func(tx *store.Tx) error { return ids.ReapTx(ctx, tx, []string{"process-9"}) }); err != nil {
			t.Fatal(err)
		}
		if a := h.do(t, "POST", "/api/v1/slow-widgets", `{}`, "Idempotency-Key", "held"); a.status != 409 {
			t.Fatalf("after another process died: %d %s, want 409", a.status, a.body)
		}
		if err := ids.DB().InTx(ctx, func(tx *store.Tx) error { return ids.ReapTx(ctx, tx, []string{"process-1"}) }); err != nil {
			t.Fatal(err)
		}
		if a := h.do(t, "POST", "/api/v1/slow-widgets", `{}`, "Idempotency-Key", "held"); a.status != 201 || a.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("after its holder died: %d %s, want the request run again", a.status, a.body)
		}
		close(h.gate)
		<-done
	})
}

// startBlocked sends a slow-widgets request under key that holds in its
// handler until h.gate closes; it returns once the handler was entered.
func (h *harness) startBlocked(t *testing.T, key string) <-chan answer {
	t.Helper()
	done := make(chan answer, 1)
	go func() {
		done <- h.do(t, "POST", "/api/v1/slow-widgets", `{}`, "Idempotency-Key", key, "X-Block", "1")
	}()
	select {
	case <-h.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("first request never reached its handler")
	}
	return done
}
