package sprm_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// callsFor returns the methods of the provider calls about one instance, in order.
func callsFor(p *providertest.Server, id string) []string {
	var out []string
	for _, c := range p.Calls() {
		if c.InstanceID == id {
			out = append(out, c.Method)
		}
	}
	return out
}

// A create whose outcome is unknown is resolved by the next attempt, not
// failed: the SPRM asks the provider whether it holds the id, then records
// it (no second create) or creates it again under the same id.
func TestCreate_ResumeResolvesAnUnknownOutcomeBothWays(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		// No health checks: a provider gone down must stay "healthy" to
		// Steward, so that a create reaches it and its outcome is unknown
		// (an unavailable provider is refused before any call).
		// No cleanup runs either: step 3 checks that an abandoned instance
		// waits in the cleanup queue, and a cleanup pass after the provider
		// comes back would delete it first.
		e := setup(t, engine, func(c *server.Config) {
			c.ProviderTimeout = 300 * time.Millisecond
			c.HealthInterval = time.Hour
			c.CleanupInterval = 0
		})
		ctx := t.Context()
		// The first check runs soon after registration; one that found the
		// provider down below would leave it degraded (refused for creates)
		// for the hour. It is waited for while the provider is up.
		poll.Until(t, "the provider's first health check", func() bool {
			p, err := e.s.SPRM().Provider(ctx, "vm-sp")
			return err == nil && p.Health.LastCheckTime != nil
		})
		create := func(id string) (sprm.Instance, error) {
			return e.s.SPRM().Create(ctx, sprm.CreateParams{ID: id, Project: "default", ProviderName: "vm-sp", Spec: vmSpec(id),
				Resume: true})
		}
		// resolved retries a create as a job would until it succeeds.
		resolved := func(id string) sprm.Instance {
			t.Helper()
			var in sprm.Instance
			poll.Until(t, "the create of "+id+" is resolved", func() bool {
				var err error
				in, err = create(id)
				return err == nil
			})
			return in
		}
		wantUnknown := func(id string, err error, resolvable bool) {
			t.Helper()
			var unknown *sprm.OutcomeUnknownError
			if !errors.As(err, &unknown) || unknown.Resolvable != resolvable {
				t.Fatalf("create %s = %v, want an unknown outcome (resolvable %v)", id, err, resolvable)
			}
			in := e.instance(t, id)
			if in.Status != "UNKNOWN" || (in.Deletion != nil) == resolvable {
				t.Fatalf("instance %s = %+v, want UNKNOWN, queued for cleanup only once given up", id, in)
			}
		}

		// 1. The answer was lost but the provider made it: recorded from a GET.
		e.p.BlockCreates()
		_, err := create("held")
		wantUnknown("held", err, true)
		e.p.UnblockCreates()
		poll.Until(t, "the provider holds held", func() bool { _, ok := e.p.Instances()["held"]; return ok })
		if in := resolved("held"); in.Status != "PROVISIONING" {
			t.Errorf("held resolved as %s, want PROVISIONING", in.Status)
		}
		calls := callsFor(e.p, "held")
		if creates := countOf(calls, providertest.MethodCreate); creates != 1 || calls[len(calls)-1] != providertest.MethodGet {
			t.Errorf("calls for held = %v, want one create, resolved by a get", calls)
		}

		// 2. The create never reached the provider: made again, same id.
		e.p.GoDown()
		_, err = create("lost")
		wantUnknown("lost", err, true)
		e.p.ComeBack()
		if in := resolved("lost"); in.Status != "PROVISIONING" {
			t.Errorf("lost resolved as %s, want PROVISIONING", in.Status)
		}
		if calls := callsFor(e.p, "lost"); len(calls) != 2 || calls[0] != providertest.MethodGet ||
			calls[1] != providertest.MethodCreate {
			t.Errorf("calls for lost = %v, want a get (not found) then a create", calls)
		}
		if _, ok := e.p.Instances()["lost"]; !ok {
			t.Error("the provider does not hold lost")
		}

		// 3. Given up: queued for cleanup, and no attempt resolves it again.
		e.p.GoDown()
		_, err = create("dropped")
		wantUnknown("dropped", err, true)
		if err := e.s.SPRM().Abandon(ctx, "dropped"); err != nil {
			t.Fatal(err)
		}
		e.p.ComeBack()
		_, err = create("dropped")
		wantUnknown("dropped", err, false)
	})
}

func countOf(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}
