package crashtest

import (
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// TestTakeover_TwoProcessesOnePostgres: two server processes share one
// PostgreSQL; the one holding a running provisioning job and an in-flight
// Idempotency-Key is killed with SIGKILL. The survivor must take both over
// within seconds (its peer lease check), not after River's rescue window
// or the key's lock timeout (minutes).
func TestTakeover_TwoProcessesOnePostgres(t *testing.T) {
	r := newReplicas(t)
	start := func(name string) *serverProc { return r.start(name) }
	call := func(s *serverProc, method, path, key string, body any) (int, map[string]any) {
		t.Helper()
		return r.call(s, method, path, key, body)
	}

	p := providertest.New(t)
	a := start("a")
	if code, body := call(a, "POST", "/api/v1/providers", "", p.Registration("vm-sp", "vm")); code != 201 {
		t.Fatalf("register the provider: %d %v", code, body)
	}
	if code, body := call(a, "POST", "/api/v1/catalog-items?id=vm", "", map[string]any{"service_type": "vm",
		"defaults": map[string]any{"vcpu": map[string]any{"count": 2}, "memory": map[string]any{"size": "2GB"},
			"guest_os": map[string]any{"type": "fedora-39"}}}); code != 201 {
		t.Fatalf("create the catalog item: %d %v", code, body)
	}
	// A holds a provisioning job (its create blocks at the provider) and
	// an in-flight request (a direct create, blocked the same way).
	p.BlockCreates()
	code, order := call(a, "POST", "/api/v1/catalog-item-instances?id=web", "k-order", map[string]any{"catalog_item_id": "vm"})
	if code != 201 {
		t.Fatalf("order: %d %v", code, order)
	}
	instanceID, _ := order["instance_id"].(string)
	p.WaitForCall(t, providertest.MethodCreate, instanceID)
	direct := map[string]any{"provider_name": "vm-sp", "spec": map[string]any{"service_type": "vm",
		"vcpu": map[string]any{"count": 1}, "memory": map[string]any{"size": "1GB"}, "guest_os": map[string]any{"type": "fedora-39"}}}
	go call(a, "POST", "/api/v1/service-type-instances?id=direct", "k-direct", direct)
	p.WaitForCall(t, providertest.MethodCreate, "direct")

	b := start("b")
	if code, _ := call(b, "POST", "/api/v1/service-type-instances?id=direct", "k-direct", direct); code != http.StatusConflict {
		t.Fatalf("the key while its holder lives answered %d, want 409 IDEMPOTENCY_KEY_IN_USE", code)
	}
	a.kill()
	killed := time.Now()

	var keyFree, jobTaken time.Duration
	poll.UntilWithin(t, 20*time.Second, "the survivor answers the dead process's key", func() bool {
		code, body := call(b, "POST", "/api/v1/service-type-instances?id=direct", "k-direct", direct)
		if code == http.StatusConflict && body["reason"] == "IDEMPOTENCY_KEY_IN_USE" {
			return false
		}
		keyFree = time.Since(killed)
		return code != 0
	})
	poll.UntilWithin(t, 20*time.Second, "the survivor runs the dead process's job again", func() bool {
		for _, c := range p.Calls() {
			if c.InstanceID == instanceID && c.Method == providertest.MethodGet {
				jobTaken = time.Since(killed)
				return true
			}
		}
		return false
	})
	t.Logf("after SIGKILL: key free in %v, provisioning job taken over in %v", keyFree.Round(time.Millisecond),
		jobTaken.Round(time.Millisecond))
	p.UnblockCreates()
	poll.UntilWithin(t, 20*time.Second, "the order's instance is recorded as created", func() bool {
		_, in := call(b, "GET", "/api/v1/service-type-instances/"+instanceID, "", nil)
		return in["status"] == "PROVISIONING" || in["status"] == "RUNNING"
	})
	if n := len(p.Instances()); n > 2 {
		t.Errorf("the provider holds %d instances, want at most the order's and the direct one", n)
	}
}
