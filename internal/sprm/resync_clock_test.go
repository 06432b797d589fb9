package sprm

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// acknowledged records a PROVISIONING instance of vm-sp, as after its
// provider accepted the create: due for resync ResyncAfter from now.
func (c clocked) acknowledged(t *testing.T, id string) {
	t.Helper()
	c.intent(t, id)
	if _, err := c.s.ApplyStatus(t.Context(), id, provider.StatusReport{Status: provider.StatusProvisioning,
		ObservedTime: c.clock.Now()}); err != nil {
		t.Fatalf("acknowledge %s: %v", id, err)
	}
}

func resyncConfig(processID string) func(*Config) {
	return func(cfg *Config) {
		cfg.ProcessID = processID
		cfg.ResyncAfter, cfg.ResyncMaxBackoff, cfg.ClaimTimeout = 30*time.Second, 2*time.Minute, time.Hour
	}
}

// Issue 22, item 1: two Services over one database (two replicas) read
// every due instance once in a round between them, never one instance
// twice; then nothing is due until the backoff has passed.
func TestRunResync_TwoServicesShareARound(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		a := setupClocked(t, engine, resyncConfig("replica-a"))
		bcfg := a.s.cfg
		bcfg.ProcessID = "replica-b"
		bProv := &fakeProviders{clock: a.clock}
		bcfg.Providers, bcfg.Registerer = bProv, nil
		b := New(bcfg)
		const n = 300 // three claims' worth each
		for i := range n {
			a.acknowledged(t, fmt.Sprintf("i-%d", i))
		}
		a.clock.Advance(29 * time.Second)
		if res, err := a.s.RunResync(t.Context()); err != nil || res != (ResyncResult{}) {
			t.Fatalf("a pass before --resync-after = %+v, %v; want nothing read", res, err)
		}

		a.clock.Advance(time.Second)
		var wg sync.WaitGroup
		results := make([]ResyncResult, 2)
		for i, s := range []*Service{a.s, b} {
			wg.Go(func() {
				var err error
				if results[i], err = s.RunResync(context.Background()); err != nil {
					t.Errorf("resync pass: %v", err)
				}
			})
		}
		wg.Wait()
		reads := map[string]int{}
		for _, p := range []*fakeProviders{a.prov, bProv} {
			for id, k := range p.getCounts() {
				reads[id] += k
			}
		}
		for i := range n {
			if id := fmt.Sprintf("i-%d", i); reads[id] != 1 {
				t.Errorf("%s read %d times in the round, want 1", id, reads[id])
			}
		}
		t.Logf("a read %d, b read %d", results[0].Unchanged, results[1].Unchanged)
		if results[0].Unchanged+results[1].Unchanged != n {
			t.Errorf("results %+v: want %d unchanged reads between them", results, n)
		}

		// Still PROVISIONING: the next read backs off to twice --resync-after.
		a.clock.Advance(59 * time.Second)
		if res, _ := b.RunResync(t.Context()); res != (ResyncResult{}) {
			t.Errorf("a pass inside the backoff = %+v; want nothing read", res)
		}
		a.clock.Advance(time.Second)
		if res, _ := b.RunResync(t.Context()); res.Unchanged != n {
			t.Errorf("a pass after the backoff = %+v; want every instance read again", res)
		}
	})
}

// Issue 22, item 1: the instances a killed replica had claimed are read by
// another as soon as peers reaps it, not after the claim expires.
func TestReapResyncTx_ReleasesADeadReplicasClaims(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, resyncConfig("dead-one"))
		c.acknowledged(t, "held")
		c.clock.Advance(30 * time.Second)
		if claimed, err := c.s.claimResync(t.Context()); err != nil || len(claimed) != 1 {
			t.Fatalf("claim = %v, %v; want the instance", claimed, err)
		}
		if res, _ := c.s.RunResync(t.Context()); res != (ResyncResult{}) {
			t.Fatalf("a pass while the claim holds = %+v; want nothing read", res)
		}
		if err := c.s.cfg.DB.InTx(t.Context(), func(tx *store.Tx) error {
			return c.s.ReapResyncTx(t.Context(), tx, []string{"dead-one"})
		}); err != nil {
			t.Fatal(err)
		}
		if res, _ := c.s.RunResync(t.Context()); res.Unchanged != 1 {
			t.Fatalf("a pass after the reap = %+v; want the instance read", res)
		}
	})
}

// Issue 22, item 1: a 404 for an instance being deleted means it is gone
// (the DELETE contract); an unreachable provider changes nothing and backs off.
func TestRunResync_DeletingGoneAndProviderDown(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, resyncConfig("p"))
		c.acknowledged(t, "leaving")
		if _, err := c.s.ApplyStatus(t.Context(), "leaving", provider.StatusReport{Status: provider.StatusDeleting,
			ObservedTime: c.clock.Now()}); err != nil {
			t.Fatal(err)
		}
		c.acknowledged(t, "stays")
		c.prov.mu.Lock()
		c.prov.missing = map[string]bool{"leaving": true}
		c.prov.mu.Unlock()
		c.clock.Advance(30 * time.Second)
		if res, err := c.s.RunResync(t.Context()); err != nil || res.NotFound != 1 || res.Unchanged != 1 {
			t.Fatalf("pass = %+v, %v; want one not_found and one unchanged", res, err)
		}
		c.wantDeleted(t, "leaving")

		c.prov.set(true, 0)
		c.clock.Advance(time.Minute)
		if res, _ := c.s.RunResync(t.Context()); res.Errors != 1 {
			t.Fatalf("pass with the provider down = %+v; want one error", res)
		}
		if in, _ := c.s.instance(t.Context(), "", "stays"); in.Status != provider.StatusProvisioning {
			t.Errorf("an unreachable provider changed the instance to %s", in.Status)
		}
		// Backed off: 2 minutes (the cap) before the next read.
		c.prov.set(false, 0)
		c.clock.Advance(time.Minute)
		if res, _ := c.s.RunResync(t.Context()); res != (ResyncResult{}) {
			t.Errorf("a pass inside the backoff = %+v; want nothing read", res)
		}
		c.clock.Advance(time.Minute)
		if res, _ := c.s.RunResync(t.Context()); res.Unchanged != 1 {
			t.Errorf("a pass after the backoff = %+v; want the instance read", res)
		}
	})
}

// A completed instance (a clean exit, issue 22 item 12) is settled: it is
// read back on the slow spread schedule, not every ResyncAfter.
func TestResyncDue_CompletedIsSettled(t *testing.T) {
	t.Parallel()
	s := &Service{cfg: Config{ResyncAfter: 30 * time.Second, ResyncSettledEvery: 10 * time.Minute}}
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for _, st := range []provider.Status{provider.StatusRunning, provider.StatusCompleted, provider.StatusFailed} {
		due := s.resyncDue(st, at)
		if due == nil || due.Sub(at) < 5*time.Minute || due.Sub(at) > 10*time.Minute {
			t.Errorf("%s: due %v after the status, want within [5m, 10m]", st, due)
		}
	}
	if due := s.resyncDue(provider.StatusProvisioning, at); due == nil || due.Sub(at) != 30*time.Second {
		t.Errorf("PROVISIONING: due %v, want 30s after", due)
	}
}
