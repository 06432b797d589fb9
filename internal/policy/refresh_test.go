package policy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/policy"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

func size(t *testing.T, svc *policy.Service) any {
	t.Helper()
	res, err := svc.Evaluate(context.Background(), policy.EvaluateParams{Spec: vmSpec()})
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return res.Spec["size"]
}

func TestRefresh_LoadsChangesMadeOnAnotherReplica(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		cfg := storetest.Config(t, engine)
		a := startReplica(t, cfg, nil)
		// b refreshes only when told; c refreshes on its own, quickly.
		b := startReplica(t, cfg, func(c *policy.Config) { c.RefreshInterval = time.Hour })
		c := startReplica(t, cfg, func(c *policy.Config) { c.RefreshInterval = 10 * time.Millisecond })

		p := a.create(t, "sizer", patchSize("Sizer", "GLOBAL", 1, "steward.sizer", "small"))
		if got := size(t, a.svc); got != "small" {
			t.Fatalf("the replica that made the change evaluates size %v, want small at once", got)
		}
		if got := size(t, b.svc); got != nil {
			t.Fatalf("b evaluates size %v before refreshing, want the set it loaded (none)", got)
		}
		rev := b.svc.Revision()
		if err := b.svc.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := size(t, b.svc); got != "small" || b.svc.Revision() == rev {
			t.Fatalf("after Refresh b evaluates size %v at revision %d (was %d), want small at a new revision", got, b.svc.Revision(), rev)
		}
		poll.Until(t, "c's loop loads the new policy", func() bool { return size(t, c.svc) == "small" })

		a.do(t, "PATCH", "/api/v1/policies/sizer", map[string]any{"rego_code": "package steward.sizer\n\nmain := {\"patch\": {\"size\": \"large\"}}\n"},
			"If-Match", p.ETag).want(t, http.StatusOK)
		poll.Until(t, "c's loop loads the changed code", func() bool { return size(t, c.svc) == "large" })
		a.do(t, "DELETE", "/api/v1/policies/sizer", nil).want(t, http.StatusNoContent)
		poll.Until(t, "c's loop drops the deleted policy", func() bool { return size(t, c.svc) == nil })

		// A replica that changes policies compiles against the stored set,
		// not its own stale one: b has not refreshed, yet it cannot reuse a's package.
		a.create(t, "owner", patchSize("Owner", "GLOBAL", 2, "steward.owner", "s"))
		b.do(t, "POST", "/api/v1/policies", patchSize("Thief", "USER", 2, "steward.owner", "m")).
			problem(t, http.StatusBadRequest, "INVALID_POLICY")
	})
}

func TestEvaluate_BeforeLoadIsRefused(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	svc := policy.New(policy.Config{DB: db, Providers: &fakeProviders{}})
	if _, err := svc.Evaluate(context.Background(), policy.EvaluateParams{Spec: vmSpec()}); err != policy.ErrNotLoaded {
		t.Fatalf("Evaluate before Load = %v, want ErrNotLoaded (an empty set would approve everything)", err)
	}
	if err := svc.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := size(t, svc); got != nil {
		t.Fatalf("size %v", got)
	}
	if err := svc.Stop(context.Background()); err != nil {
		t.Fatalf("Stop before Start: %v", err)
	}
}

func TestEvaluate_ConcurrentWithChanges(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.create(t, "sizer", patchSize("Sizer", "GLOBAL", 1, "steward.sizer", "v0"))
		e.create(t, "tagger", map[string]any{"display_name": "Tagger", "policy_type": "USER",
			"rego_code": "package steward.tagger\n\nmain := {\"patch\": {\"tag\": input.spec.size}}\n"})

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for range 2 {
			wg.Go(func() {
				for n := 0; ctx.Err() == nil; n++ {
					res, err := e.svc.Evaluate(ctx, policy.EvaluateParams{Spec: vmSpec()})
					if err != nil {
						errs <- err
						return
					}
					// Each evaluation runs wholly on one set: the tag always
					// copies the size of that same set.
					if res.Spec["tag"] != res.Spec["size"] {
						errs <- fmt.Errorf("evaluation %d mixed two sets: %v", n, res.Spec)
						return
					}
				}
			})
		}
		for i := 1; i <= 20; i++ {
			body := map[string]any{"rego_code": fmt.Sprintf("package steward.sizer\n\nmain := {\"patch\": {\"size\": \"v%d\"}}\n", i)}
			if i%5 == 0 {
				body["enabled"] = i%10 == 0 // off at 5 and 15, back on at 10 and 20
			}
			e.do(t, "PATCH", "/api/v1/policies/sizer", body).want(t, http.StatusOK)
		}
		cancel()
		wg.Wait()
		close(errs)
		for err := range errs {
			if !errors.Is(err, context.Canceled) {
				t.Error(err)
			}
		}
		if got := size(t, e.svc); got != "v20" {
			t.Fatalf("after the changes size = %v, want v20", got)
		}
	})
}
