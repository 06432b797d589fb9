package sprm_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/events"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestCreate_ProviderGetsTheSpec(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		in := e.create(t, "fedora-vm")
		if in.InstanceID != "fedora-vm" || in.Path != "service-type-instances/fedora-vm" || in.Status != "PROVISIONING" ||
			in.ProviderName != "vm-sp" || in.ServiceType != "vm" || in.Name != "fedora-vm" {
			t.Fatalf("created %+v", in)
		}
		call := e.p.WaitForCall(t, providertest.MethodCreate, "fedora-vm")
		if call.IdempotencyKey != "fedora-vm" || call.ServiceType != "vm" || call.Metadata.Project != "default" {
			t.Errorf("provider got %+v, want Idempotency-Key = instance id, service type vm, project default", call)
		}
		if got, _ := json.Marshal(call.Spec); !contains(string(got), `"guest_os":{"type":"fedora-39"}`) {
			t.Errorf("provider got spec %s", got)
		}
		// Generated ids, lists and filters.
		var gen instance
		e.s.Do(t, "POST", "/api/v1/service-type-instances", map[string]any{"provider_name": "vm-sp", "spec": vmSpec("x")}).
			Want(t, http.StatusAccepted).JSON(t, &gen)
		if len(gen.ID) != 36 {
			t.Errorf("generated id %q is not a UUID", gen.ID)
		}
		var page struct {
			Results []instance `json:"results"`
		}
		e.s.Do(t, "GET", "/api/v1/service-type-instances?provider_name=vm-sp&status=PROVISIONING", nil).Want(t, 200).JSON(t, &page)
		if len(page.Results) != 2 {
			t.Errorf("list = %d instances, want 2", len(page.Results))
		}
		e.s.Do(t, "GET", "/api/v1/service-type-instances?service_type=container", nil).Want(t, 200).JSON(t, &page)
		if len(page.Results) != 0 {
			t.Errorf("container filter = %d instances, want 0", len(page.Results))
		}
	})
}

func TestCreate_ErrorTable(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		// 404: the provider is not registered.
		e.s.Do(t, "POST", "/api/v1/service-type-instances", map[string]any{"provider_name": "ghost-sp", "spec": vmSpec("a")}).
			WantProblem(t, http.StatusNotFound, "PROVIDER_NOT_FOUND")

		// 400: the spec breaks the service type's schema, naming the field.
		badSpec := vmSpec("a")
		badSpec["vcpu"] = map[string]any{"count": "two"}
		p := e.s.Do(t, "POST", "/api/v1/service-type-instances", map[string]any{"provider_name": "vm-sp", "spec": badSpec}).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if !contains(string(mustJSON(p.Fields)), "spec.vcpu.count") {
			t.Errorf("schema problem fields %v do not name spec.vcpu.count", p.Fields)
		}
		unknown := vmSpec("a")
		unknown["service_type"] = "teapot"
		e.s.Do(t, "POST", "/api/v1/service-type-instances", map[string]any{"provider_name": "vm-sp", "spec": unknown}).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")

		// The provider's refusal is forwarded with its status and body.
		e.p.FailCreate(http.StatusUnprocessableEntity, `{"error":"no such image"}`)
		r := e.s.Do(t, "POST", "/api/v1/service-type-instances?id=refused", map[string]any{"provider_name": "vm-sp", "spec": vmSpec("a")})
		r.WantProblem(t, http.StatusUnprocessableEntity, "PROVIDER_ERROR")
		if !contains(string(r.Body), `"provider_response":{"error":"no such image"}`) {
			t.Errorf("refusal body %s lacks the provider's response", r.Body)
		}
		e.p.SucceedCreates()
		// A refused create leaves no record behind.
		e.s.Do(t, "GET", "/api/v1/service-type-instances/refused?show_deleted=true", nil).
			WantProblem(t, http.StatusNotFound, "INSTANCE_NOT_FOUND")

		// 409: a retried create with the same id never provisions twice.
		e.create(t, "once")
		e.s.Do(t, "POST", "/api/v1/service-type-instances?id=once", map[string]any{"provider_name": "vm-sp", "spec": vmSpec("a")}).
			WantProblem(t, http.StatusConflict, "ALREADY_EXISTS")
		creates := 0
		for _, c := range e.p.Creates() {
			if c.InstanceID == "once" {
				creates++
			}
		}
		if creates != 1 {
			t.Errorf("provider saw %d creates of one id, want 1", creates)
		}
	})
}

func TestCreate_UnknownOutcomeIsQueuedForCleanup(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.p.BlockCreates()
		r := e.s.Do(t, "POST", "/api/v1/service-type-instances?id=slow", map[string]any{"provider_name": "vm-sp", "spec": vmSpec("slow")})
		r.WantProblem(t, http.StatusGatewayTimeout, "PROVIDER_TIMEOUT")
		if !contains(string(r.Body), `"instance_id":"slow"`) {
			t.Errorf("timeout problem %s lacks instance_id", r.Body)
		}
		e.p.UnblockCreates()
		// Whatever the provider made is deleted, not orphaned.
		e.p.WaitForCall(t, providertest.MethodDelete, "slow")
		poll.Until(t, "the instance with an unknown outcome ends DELETED", func() bool { return e.instance(t, "slow").Status == "DELETED" })
	})
}

func TestCreate_RecordFailureAnswers500WithInstanceIDAndQueuesCleanup(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		// Make the outcome write fail in the real database, after the provider
		// has created the instance.
		failOutcome(t, e.s.DB())
		r := e.s.Do(t, "POST", "/api/v1/service-type-instances?id=unrecorded", map[string]any{"provider_name": "vm-sp", "spec": vmSpec("u")})
		r.WantProblem(t, http.StatusInternalServerError, "INSTANCE_RECORD_FAILED")
		if !contains(string(r.Body), `"instance_id":"unrecorded"`) {
			t.Fatalf("500 body %s lacks instance_id", r.Body)
		}
		e.p.WaitForCall(t, providertest.MethodCreate, "unrecorded")
		e.p.WaitForCall(t, providertest.MethodDelete, "unrecorded")
		poll.Until(t, "the unrecorded instance is cleaned up", func() bool { return e.instance(t, "unrecorded").Status == "DELETED" })
	})
}

// failOutcome installs a trigger that refuses to move an instance from
// PENDING to PROVISIONING: the write that records a create's outcome.
func failOutcome(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	var stmts []string
	if db.Engine() == store.SQLite {
		stmts = []string{`CREATE TRIGGER fail_outcome BEFORE UPDATE OF status ON service_type_instances
			WHEN OLD.status = 'PENDING' AND NEW.status = 'PROVISIONING'
			BEGIN SELECT RAISE(ABORT, 'injected failure'); END`}
	} else {
		stmts = []string{`CREATE FUNCTION fail_outcome() RETURNS trigger AS $$
			BEGIN RAISE EXCEPTION 'injected failure'; END $$ LANGUAGE plpgsql`,
			`CREATE TRIGGER fail_outcome BEFORE UPDATE ON service_type_instances FOR EACH ROW
			WHEN (OLD.status = 'PENDING' AND NEW.status = 'PROVISIONING') EXECUTE FUNCTION fail_outcome()`}
	}
	for _, q := range stmts {
		if _, err := db.Exec(ctx, q); err != nil {
			t.Fatalf("install trigger: %v", err)
		}
	}
}

func TestStatus_HTTPAndNATSMoveTheInstance(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.create(t, "vm-1")
		now := time.Now().UTC()
		var in instance
		e.s.Do(t, "PUT", "/api/v1/service-type-instances/vm-1/status", map[string]any{
			"status": "RUNNING", "message": "booted", "observed_time": now,
		}).Want(t, http.StatusOK).JSON(t, &in)
		if in.Status != "RUNNING" || in.StatusMessage != "booted" {
			t.Fatalf("after report: %+v", in)
		}
		// An older report is ignored.
		e.s.Do(t, "PUT", "/api/v1/service-type-instances/vm-1/status", map[string]any{
			"status": "FAILED", "observed_time": now.Add(-time.Minute),
		}).Want(t, http.StatusNoContent)
		if got := e.instance(t, "vm-1").Status; got != "RUNNING" {
			t.Fatalf("a stale report changed the status to %s", got)
		}
		e.s.Do(t, "PUT", "/api/v1/service-type-instances/vm-1/status", map[string]any{"status": "SLEEPY", "observed_time": now}).
			WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		e.s.Do(t, "PUT", "/api/v1/service-type-instances/ghost/status", map[string]any{"status": "RUNNING", "observed_time": now}).
			WantProblem(t, http.StatusNotFound, "INSTANCE_NOT_FOUND")

		// The same intake over NATS, through the SDK's reporter.
		rep := provider.NATSReporter{Publisher: busPublisher{e.s.Bus()}, ServiceType: "vm", Source: "/providers/vm-sp"}
		if err := rep.Report(context.Background(), provider.StatusReport{InstanceID: "vm-1", Status: provider.StatusFailed,
			Message: "disk gone", ObservedTime: now.Add(time.Second)}); err != nil {
			t.Fatalf("publish: %v", err)
		}
		poll.Until(t, "the NATS report is applied", func() bool { return e.instance(t, "vm-1").Status == "FAILED" })

		// A report for an instance not recorded yet is retried, not dropped.
		if err := rep.Report(context.Background(), provider.StatusReport{InstanceID: "late", Status: provider.StatusRunning,
			ObservedTime: now.Add(2 * time.Second)}); err != nil {
			t.Fatalf("publish: %v", err)
		}
		e.create(t, "late")
		poll.Until(t, "the early report for 'late' is applied once it exists", func() bool { return e.instance(t, "late").Status == "RUNNING" })
	})
}

// busPublisher lets the SDK's NATSReporter publish through Steward's bus.
type busPublisher struct{ bus *events.Bus }

func (b busPublisher) Publish(subject string, data []byte) error {
	ev, err := events.ParseEvent(data)
	if err != nil {
		return err
	}
	return b.bus.Publish(context.Background(), subject, ev)
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }
