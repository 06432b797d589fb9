package sprm_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// An instance's outputs (issue 24) come with the provider's create answer,
// are replaced whole by a report that carries outputs and kept by one that
// does not; outputs the contract does not allow are a 400 that changes
// nothing.
func TestOutputs_FromTheAnswerReplacedByReportsAndChecked(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		outputsOf := func(id string) map[string]any {
			t.Helper()
			var got struct {
				Outputs map[string]any `json:"outputs"`
			}
			e.s.Do(t, "GET", "/api/v1/service-type-instances/"+id, nil).Want(t, http.StatusOK).JSON(t, &got)
			return got.Outputs
		}
		report := func(id string, body map[string]any) {
			t.Helper()
			body["observed_time"] = time.Now().UTC().Format(time.RFC3339Nano)
			e.s.Do(t, "PUT", "/api/v1/service-type-instances/"+id+"/status", body).Want(t, http.StatusOK)
		}

		e.create(t, "plain")
		if got := outputsOf("plain"); got == nil || len(got) != 0 {
			t.Errorf("an instance without outputs shows %v, want {}", got)
		}

		e.p.SetOutputs(provider.Outputs{"host": "10.0.0.7", "port": 5432})
		e.create(t, "db")
		if got, want := outputsOf("db"), map[string]any{"host": "10.0.0.7", "port": 5432.0}; !reflect.DeepEqual(got, want) {
			t.Errorf("after the create's answer: outputs %v, want %v", got, want)
		}

		report("db", map[string]any{"status": "RUNNING", "outputs": map[string]any{"host": "db.internal", "tls": true}})
		want := map[string]any{"host": "db.internal", "tls": true}
		if got := outputsOf("db"); !reflect.DeepEqual(got, want) {
			t.Errorf("after a report with outputs: %v, want %v (replaced whole)", got, want)
		}
		report("db", map[string]any{"status": "RUNNING", "message": "still"})
		if got := outputsOf("db"); !reflect.DeepEqual(got, want) {
			t.Errorf("after a report without outputs: %v, want %v (kept)", got, want)
		}

		many := map[string]any{}
		for i := range provider.MaxOutputs + 1 {
			many[fmt.Sprintf("k%d", i)] = i
		}
		for name, bad := range map[string]map[string]any{
			"upper-case name": {"Host": "x"},
			"name with a dot": {"a.b": "x"},
			"object value":    {"host": map[string]any{"name": "x"}},
			"list value":      {"hosts": []any{"a"}},
			"null value":      {"host": nil},
			"long string":     {"note": strings.Repeat("x", provider.MaxOutputLen+1)},
			"too many":        many,
		} {
			r := e.s.Do(t, "PUT", "/api/v1/service-type-instances/db/status", map[string]any{"status": "RUNNING",
				"observed_time": time.Now().UTC().Format(time.RFC3339Nano), "outputs": bad})
			if p := r.WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT"); !strings.Contains(p.Detail, "outputs") {
				t.Errorf("%s: problem %q does not name outputs", name, p.Detail)
			}
		}
		if got := outputsOf("db"); !reflect.DeepEqual(got, want) {
			t.Errorf("after refused reports: %v, want %v (unchanged)", got, want)
		}
	})
}

// A resync whose read answers the status Steward has but new outputs
// records them: observed values (a database's size) follow at the
// resync's pace without a report.
func TestOutputs_ResyncRecordsNewOutputsOfAnUnchangedStatus(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine, resyncFast(time.Second, 2*time.Second))
		e.create(t, "obs-1")
		if err := e.p.Report(t.Context(), lost, "obs-1", provider.StatusRunning); err != nil {
			t.Fatal(err)
		}
		poll.UntilWithin(t, 30*time.Second, "the RUNNING is read back", func() bool {
			return e.instance(t, "obs-1").Status == "RUNNING"
		})
		e.p.SetOutputs(provider.Outputs{"size_bytes": 42})
		poll.UntilWithin(t, 30*time.Second, "a settled resync records the new outputs", func() bool {
			var got struct {
				Status  string         `json:"status"`
				Outputs map[string]any `json:"outputs"`
			}
			e.s.Do(t, "GET", "/api/v1/service-type-instances/obs-1", nil).Want(t, http.StatusOK).JSON(t, &got)
			return got.Status == "RUNNING" && reflect.DeepEqual(got.Outputs, map[string]any{"size_bytes": 42.0})
		})
	})
}
