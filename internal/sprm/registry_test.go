package sprm_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

func TestRegister_IdempotentByName(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, fast)
		p := providertest.New(t)
		reg := p.Registration("kubevirt-sp", "vm")
		reg.Metadata = map[string]string{"region": "us-east-1"}
		reg.Capacity = map[string]int64{"vcpu": 64}

		var first, again providerView
		s.Do(t, "POST", "/api/v1/providers", reg).Want(t, http.StatusCreated).JSON(t, &first)
		if first.ID != "kubevirt-sp" || first.Status != "healthy" {
			t.Fatalf("registered %+v, want id = name and healthy", first)
		}
		reg.Capacity["vcpu"] = 128
		s.Do(t, "POST", "/api/v1/providers", reg).Want(t, http.StatusOK).JSON(t, &again)
		if again.ID != first.ID || again.ETag == first.ETag {
			t.Fatalf("re-registration %+v, want the same id and a new etag (was %s)", again, first.ETag)
		}
		var got struct {
			Capacity map[string]int64  `json:"capacity"`
			Metadata map[string]string `json:"metadata"`
		}
		s.Do(t, "GET", "/api/v1/providers/kubevirt-sp", nil).Want(t, http.StatusOK).JSON(t, &got)
		if got.Capacity["vcpu"] != 128 || got.Metadata["region"] != "us-east-1" {
			t.Fatalf("stored %+v", got)
		}

		s.Do(t, "POST", "/api/v1/providers?id=other-id", reg).WantProblem(t, http.StatusConflict, "PROVIDER_ID_CONFLICT")
		taken := p.Registration("another-sp", "vm")
		s.Do(t, "POST", "/api/v1/providers?id=kubevirt-sp", taken).WantProblem(t, http.StatusConflict, "PROVIDER_ID_CONFLICT")

		bad := p.Registration("Not A Name", "vm")
		bad.Endpoint = "ftp://x"
		pr := s.Do(t, "POST", "/api/v1/providers", bad).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if len(pr.Fields) == 0 {
			t.Errorf("invalid registration problem names no field: %+v", pr)
		}
		s.Do(t, "GET", "/api/v1/providers/nope", nil).WantProblem(t, http.StatusNotFound, "PROVIDER_NOT_FOUND")
	})
}

func TestProvider_PatchHonoursIfMatch(t *testing.T) {
	t.Parallel()
	e := setup(t, store.SQLite)
	var p providerView
	e.s.Do(t, "GET", "/api/v1/providers/vm-sp", nil).Want(t, http.StatusOK).JSON(t, &p)
	patch := map[string]any{"metadata": map[string]string{"zone": "b"}}
	e.s.Do(t, "PATCH", "/api/v1/providers/vm-sp", patch, "If-Match", p.ETag).Want(t, http.StatusOK)
	// The etag read before the first patch is stale now.
	e.s.Do(t, "PATCH", "/api/v1/providers/vm-sp", patch, "If-Match", p.ETag).WantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
	e.s.Do(t, "DELETE", "/api/v1/providers/vm-sp", nil, "If-Match", p.ETag).WantProblem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
}

func TestDeregister_RefusedWhileProviderOwnsInstances(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		live := func() (get, list int) {
			var one struct {
				LiveInstances int `json:"live_instances"`
			}
			e.s.Do(t, "GET", "/api/v1/providers/vm-sp", nil).Want(t, http.StatusOK).JSON(t, &one)
			var all struct {
				Results []struct {
					LiveInstances int `json:"live_instances"`
				} `json:"results"`
			}
			e.s.Do(t, "GET", "/api/v1/providers", nil).Want(t, http.StatusOK).JSON(t, &all)
			if len(all.Results) != 1 {
				t.Fatalf("providers listed: %d, want 1", len(all.Results))
			}
			return one.LiveInstances, all.Results[0].LiveInstances
		}
		if get, list := live(); get != 0 || list != 0 {
			t.Errorf("live_instances before any create: get %d, list %d; want 0", get, list)
		}
		e.create(t, "vm-1")
		if get, list := live(); get != 1 || list != 1 {
			t.Errorf("live_instances with vm-1: get %d, list %d; want 1", get, list)
		}
		e.s.Do(t, "DELETE", "/api/v1/providers/vm-sp", nil).WantProblem(t, http.StatusConflict, "PROVIDER_IN_USE")

		// A deletion that is only queued, or under way at the provider,
		// still needs the provider. (The provider keeps the instance until
		// the test reports it deleted: the cleanup worker, every 100 ms,
		// could otherwise finish before the check under load.)
		e.p.SlowDeletes()
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/vm-1?deferred=true", nil).Want(t, http.StatusOK)
		e.s.Do(t, "DELETE", "/api/v1/providers/vm-sp", nil).WantProblem(t, http.StatusConflict, "PROVIDER_IN_USE")
		e.s.Do(t, "PUT", "/api/v1/service-type-instances/vm-1/status", map[string]any{"status": "DELETED",
			"observed_time": time.Now().UTC().Format(time.RFC3339Nano)}).Want(t, http.StatusOK)

		poll.Until(t, "vm-1 is deleted", func() bool { return e.instance(t, "vm-1").Status == "DELETED" })
		if get, list := live(); get != 0 || list != 0 {
			t.Errorf("live_instances after vm-1's deletion: get %d, list %d; want 0", get, list)
		}
		e.s.Do(t, "DELETE", "/api/v1/providers/vm-sp", nil).Want(t, http.StatusNoContent)
		e.s.Do(t, "GET", "/api/v1/providers/vm-sp", nil).WantProblem(t, http.StatusNotFound, "PROVIDER_NOT_FOUND")
	})
}

func TestHealth_ProviderDownTurnsUnavailableAndRecovers(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.p.SetHealth(false)
		poll.Until(t, "an unhealthy answer makes the provider degraded", func() bool { return e.providerStatus(t) == "degraded" })
		e.s.Do(t, "POST", "/api/v1/service-type-instances", map[string]any{"provider_name": "vm-sp", "spec": vmSpec("a")}).
			WantProblem(t, http.StatusServiceUnavailable, "PROVIDER_UNAVAILABLE")

		e.p.SetHealth(true)
		e.p.GoDown()
		poll.Until(t, "failed checks make the provider unavailable", func() bool { return e.providerStatus(t) == "unavailable" })
		e.s.Do(t, "POST", "/api/v1/service-type-instances", map[string]any{"provider_name": "vm-sp", "spec": vmSpec("b")}).
			WantProblem(t, http.StatusServiceUnavailable, "PROVIDER_UNAVAILABLE")

		e.p.ComeBack()
		poll.Until(t, "one good answer makes it healthy again", func() bool { return e.providerStatus(t) == "healthy" })
		e.create(t, "after-recovery")

		metrics := string(e.s.Do(t, "GET", "/metrics", nil).Body)
		for _, want := range []string{`from="healthy",provider="vm-sp",to="degraded"`, `to="unavailable"`, `from="unavailable",provider="vm-sp",to="healthy"`} {
			if !contains(metrics, want) {
				t.Errorf("metrics lack a transition %s", want)
			}
		}
		// The registration and each transition are in the audit log, the
		// transitions by Steward itself.
		var transitions []string
		registered := false
		for _, r := range e.auditEvents(t, "provider:vm-sp") {
			registered = registered || r.Action == "provider.create"
			if r.Action == "provider.health.changed" && r.Actor.ID == "steward" && r.Outcome == "success" {
				transitions = append(transitions, r.Details["from"].(string)+"->"+r.Details["to"].(string))
			}
		}
		if !registered {
			t.Error("no provider.create audit record on provider:vm-sp: the registration's target lacks the provider")
		}
		// Whether degraded clears before the failures start depends on when
		// the checks ran; the first and last transitions do not.
		got := strings.Join(transitions, " ")
		// A registration is unknown until its first check, run before the
		// registration is answered.
		if !strings.HasPrefix(got, "unknown->healthy healthy->degraded ") || !strings.Contains(got, "->unavailable ") ||
			!strings.HasSuffix(got, " unavailable->healthy") {
			t.Errorf("audited transitions %v, want unknown->healthy, healthy->degraded, then to unavailable, then "+
				"unavailable->healthy", got)
		}
	})
}

func TestProviderLoads_CountLiveInstances(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		p2 := providertest.New(t)
		e.s.Do(t, "POST", "/api/v1/providers", p2.Registration("idle-sp", "vm")).Want(t, http.StatusCreated)
		e.create(t, "a")
		e.create(t, "b")
		loads, err := e.s.SPRM().ProviderLoads(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, l := range loads {
			got[l.Name] = l.LiveInstances
		}
		if len(got) != 2 || got["vm-sp"] != 2 || got["idle-sp"] != 0 {
			t.Fatalf("loads = %v, want vm-sp 2 and idle-sp 0", got)
		}
	})
}

// Placement reuses the registry it read (registrySnapshot); a change made
// through this process must show at once, not after the snapshot's TTL.
func TestProviderLoads_SeeRegistryChangesAtOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		names := func() map[string]any {
			loads, err := e.s.SPRM().ProviderLoads(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]any{}
			for _, l := range loads {
				got[l.Name] = l.Metadata["zone"]
			}
			return got
		}
		if got := names(); len(got) != 1 {
			t.Fatalf("providers = %v, want vm-sp only", got)
		}
		p2 := providertest.New(t)
		reg := p2.Registration("new-sp", "vm")
		e.s.Do(t, "POST", "/api/v1/providers", reg).Want(t, http.StatusCreated)
		if got := names(); len(got) != 2 {
			t.Fatalf("after a registration: providers = %v, want vm-sp and new-sp", got)
		}
		e.s.Do(t, "PATCH", "/api/v1/providers/new-sp", map[string]any{"metadata": map[string]any{"zone": "b"}}).
			Want(t, http.StatusOK)
		if got := names(); got["new-sp"] != "b" {
			t.Fatalf("after an update: providers = %v, want new-sp in zone b", got)
		}
		e.s.Do(t, "DELETE", "/api/v1/providers/new-sp", nil).Want(t, http.StatusNoContent)
		if got := names(); len(got) != 1 {
			t.Fatalf("after a deregistration: providers = %v, want vm-sp only", got)
		}
	})
}
