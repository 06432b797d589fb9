package sprm_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// Issue 22, item 4: a registration under a name another endpoint holds
// (two --dev replicas both registering process-sp) moves the provider, and
// says so: a warning with both endpoints, and previous_endpoint and
// endpoint_change_time on the provider. Registering the same endpoint
// again moves nothing.
func TestRegister_MovingAProviderIsLoggedAndShown(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		var logs apitest.Logs
		e := setup(t, engine, logs.CaptureLogs)
		type view struct {
			Endpoint           string     `json:"endpoint"`
			PreviousEndpoint   *string    `json:"previous_endpoint"`
			EndpointChangeTime *time.Time `json:"endpoint_change_time"`
		}
		var v view
		e.s.Do(t, "GET", "/api/v1/providers/vm-sp", nil).Want(t, http.StatusOK).JSON(t, &v)
		if v.PreviousEndpoint == nil || *v.PreviousEndpoint != "" || v.EndpointChangeTime != nil {
			t.Fatalf("a provider that never moved = %+v, want previous_endpoint \"\" and endpoint_change_time null", v)
		}
		e.s.Do(t, "POST", "/api/v1/providers", e.p.Registration("vm-sp", "vm", "container")).Want(t, http.StatusOK)
		e.s.Do(t, "GET", "/api/v1/providers/vm-sp", nil).Want(t, http.StatusOK).JSON(t, &v)
		if *v.PreviousEndpoint != "" || v.EndpointChangeTime != nil {
			t.Fatalf("registered again at the same endpoint = %+v, want no move", v)
		}

		second := providertest.New(t)
		before := time.Now()
		e.s.Do(t, "POST", "/api/v1/providers", second.Registration("vm-sp", "vm", "container")).Want(t, http.StatusOK)
		e.s.Do(t, "GET", "/api/v1/providers/vm-sp", nil).Want(t, http.StatusOK).JSON(t, &v)
		if v.Endpoint != second.URL() || *v.PreviousEndpoint != e.p.URL() || v.EndpointChangeTime == nil ||
			v.EndpointChangeTime.Before(before.Add(-time.Second)) {
			t.Fatalf("after the move = %+v, want endpoint %s, previous_endpoint %s and the time of the move",
				v, second.URL(), e.p.URL())
		}
		for _, want := range []string{`"level":"WARN"`, `"provider":"vm-sp"`, `"previous_endpoint":"` + e.p.URL() + `"`,
			`"endpoint":"` + second.URL() + `"`} {
			line := ""
			for l := range strings.SplitSeq(logs.String(), "\n") {
				if strings.Contains(l, "provider moved to another endpoint") {
					line = l
				}
			}
			if !strings.Contains(line, want) {
				t.Fatalf("the move's log line %q lacks %s", line, want)
			}
		}
	})
}
