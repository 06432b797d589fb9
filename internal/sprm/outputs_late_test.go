package sprm_test

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// Outputs that come only with the create's answer are kept when a status
// report (without outputs) got there first and recorded the status: the
// answer then changes no status, but its outputs are the instance's. A GET
// shows them, as the create answered them.
func TestOutputs_KeptWhenTheAnswerComesAfterAReport(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.p.SetOutputs(provider.Outputs{"host": "10.0.0.7", "port": 5432})
		e.p.BlockCreates()
		type result struct {
			in  sprm.Instance
			err error
		}
		created := make(chan result, 1)
		go func() {
			in, err := e.s.SPRM().Create(t.Context(), sprm.CreateParams{ID: "late", Project: "default",
				ProviderName: "vm-sp", Spec: vmSpec("late")})
			created <- result{in, err}
		}()
		e.p.WaitForCall(t, providertest.MethodCreate, "late")
		e.s.Do(t, "PUT", "/api/v1/service-type-instances/late/status", map[string]any{"status": "RUNNING",
			"observed_time": time.Now().UTC().Format(time.RFC3339Nano)}).Want(t, http.StatusOK)
		e.p.UnblockCreates()
		r := <-created
		if r.err != nil {
			t.Fatalf("create: %v", r.err)
		}
		want := provider.Outputs{"host": "10.0.0.7", "port": 5432.0}
		if r.in.Status != provider.StatusRunning || !reflect.DeepEqual(r.in.Outputs, want) {
			t.Errorf("create answered %s with outputs %v; want RUNNING (the report's) with %v", r.in.Status, r.in.Outputs, want)
		}
		var got struct {
			Status  string         `json:"status"`
			Outputs map[string]any `json:"outputs"`
		}
		e.s.Do(t, "GET", "/api/v1/service-type-instances/late", nil).Want(t, http.StatusOK).JSON(t, &got)
		if got.Status != "RUNNING" || !reflect.DeepEqual(provider.Outputs(got.Outputs), want) {
			t.Errorf("GET shows %s with outputs %v; want RUNNING with %v", got.Status, got.Outputs, want)
		}
	})
}
