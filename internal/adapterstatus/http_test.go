package adapterstatus_test

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

// env is a server with a provider, a catalog item and one order, "web".
type env struct {
	s *apitest.Server
}

func setup(t *testing.T, engine store.Engine) env {
	t.Helper()
	s := apitest.Start(t, engine, apitest.Fast)
	p := providertest.New(t)
	s.Do(t, "POST", "/api/v1/providers", p.Registration("vm-sp", "vm")).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-items?id=small-vm", map[string]any{
		"service_type": "vm",
		"defaults": map[string]any{"vcpu": map[string]any{"count": 2}, "memory": map[string]any{"size": "2GB"},
			"guest_os": map[string]any{"type": "fedora-39"}},
	}).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "small-vm"}).
		Want(t, http.StatusCreated)
	return env{s}
}

const statusesPath = "/api/v1/catalog-item-instances/web/adapter-statuses"

// report is a report body: Applied, Available and Health as given.
func report(gen int64, at time.Time, applied, available, health string) map[string]any {
	return map[string]any{
		"observed_generation": gen,
		"observed_time":       at.UTC().Format(time.RFC3339Nano),
		"conditions": []map[string]any{
			{"type": "Applied", "status": applied, "reason": "Reconciled", "message": ""},
			{"type": "Available", "status": available},
			{"type": "Health", "status": health},
		},
		"data": map[string]any{"namespace": "web-ns"},
	}
}

type stored struct {
	Adapter            string    `json:"adapter"`
	ObservedGeneration int64     `json:"observed_generation"`
	ObservedTime       time.Time `json:"observed_time"`
	Conditions         []struct {
		Type, Status, Reason string
	} `json:"conditions"`
	Data map[string]any `json:"data"`
}

func (e env) list(t *testing.T) map[string]stored {
	t.Helper()
	var page struct {
		Results       []stored `json:"results"`
		NextPageToken string   `json:"next_page_token"`
	}
	e.s.Do(t, "GET", statusesPath, nil).Want(t, http.StatusOK).JSON(t, &page)
	out := map[string]stored{}
	for _, r := range page.Results {
		out[r.Adapter] = r
	}
	return out
}

func condition(r stored, typ string) string {
	for _, c := range r.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

func TestAdapterStatus_StoredReplacedAndListed(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		t0 := time.Now().Add(-time.Minute)
		var got stored
		e.s.Do(t, "PUT", statusesPath+"/k8s", report(1, t0, "True", "False", "True")).Want(t, http.StatusOK).JSON(t, &got)
		if got.Adapter != "k8s" || got.ObservedGeneration != 1 || !got.ObservedTime.Equal(t0.UTC().Truncate(time.Microsecond)) &&
			!got.ObservedTime.Equal(t0.UTC()) || condition(got, "Applied") != "True" || got.Data["namespace"] != "web-ns" {
			t.Fatalf("stored %+v", got)
		}
		e.s.Do(t, "PUT", statusesPath+"/dns", report(1, t0, "True", "True", "True")).Want(t, http.StatusOK)
		// A later observation of the same generation replaces the stored one.
		e.s.Do(t, "PUT", statusesPath+"/k8s", report(1, t0.Add(time.Second), "True", "True", "True")).Want(t, http.StatusOK)
		all := e.list(t)
		if len(all) != 2 || condition(all["k8s"], "Available") != "True" || condition(all["dns"], "Available") != "True" {
			t.Fatalf("listed %+v, want k8s and dns, both Available", all)
		}
	})
}

func TestAdapterStatus_RefusesAnIncompleteReport(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		now := time.Now()
		noHealth := report(1, now, "True", "True", "True")
		noHealth["conditions"] = noHealth["conditions"].([]map[string]any)[:2]
		badStatus := report(1, now, "Yes", "True", "True")
		noGeneration := report(1, now, "True", "True", "True")
		delete(noGeneration, "observed_generation")
		noTime := report(1, now, "True", "True", "True")
		delete(noTime, "observed_time")
		for name, c := range map[string]struct {
			path  string
			body  map[string]any
			field string
		}{
			"Health missing":             {statusesPath + "/k8s", noHealth, "conditions"},
			"status not True/False":      {statusesPath + "/k8s", badStatus, "conditions[0].status"},
			"observed_generation absent": {statusesPath + "/k8s", noGeneration, "observed_generation"},
			"observed_time absent":       {statusesPath + "/k8s", noTime, "observed_time"},
			"adapter name":               {statusesPath + "/K8S_adapter", report(1, now, "True", "True", "True"), "adapter"},
		} {
			p := e.s.Do(t, "PUT", c.path, c.body).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
			named := false
			for _, f := range p.Fields {
				named = named || f["field"] == c.field
			}
			if !named {
				t.Errorf("%s: problem %+v does not name %s", name, p, c.field)
			}
		}
		if got := e.list(t); len(got) != 0 {
			t.Fatalf("refused reports were stored: %+v", got)
		}
		e.s.Do(t, "PUT", "/api/v1/catalog-item-instances/nope/adapter-statuses/k8s", report(1, now, "True", "True", "True")).
			WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")
		e.s.Do(t, "GET", "/api/v1/catalog-item-instances/nope/adapter-statuses", nil).
			WantProblem(t, http.StatusNotFound, "ORDER_NOT_FOUND")
	})
}

// A report that is older than the stored one, for a generation the order
// is past or has not reached, or observed in the future is discarded (204)
// and changes nothing. The case that made HyperFleet drop its deletion
// gate: a report made before the delete (the old generation) must not be
// taken as the deletion's confirmation, however late it arrives.
func TestAdapterStatus_DiscardsStaleAndFutureReports(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		t0 := time.Now().Add(-time.Minute)
		e.s.Do(t, "PUT", statusesPath+"/k8s", report(1, t0, "True", "True", "True")).Want(t, http.StatusOK)
		discarded := func(body map[string]any, why string) {
			t.Helper()
			r := e.s.Do(t, "PUT", statusesPath+"/k8s", body).Want(t, http.StatusNoContent)
			if got := r.Header.Get("Steward-Discarded"); got != why {
				t.Errorf("Steward-Discarded = %q, want %q", got, why)
			}
		}
		discarded(report(1, t0.Add(-time.Second), "False", "False", "True"), "older")
		discarded(report(2, time.Now(), "False", "False", "True"), "future_generation")
		discarded(report(1, time.Now().Add(10*time.Minute), "False", "False", "True"), "future_time")
		if k8s := e.list(t)["k8s"]; condition(k8s, "Applied") != "True" || k8s.ObservedGeneration != 1 {
			t.Fatalf("a discarded report changed the stored one: %+v", k8s)
		}

		e.s.Do(t, "DELETE", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusAccepted)
		// Applied=False, Health=True and observed after the delete, but for
		// the generation before it: not the deletion's confirmation.
		discarded(report(1, time.Now(), "False", "False", "True"), "past_generation")
		if k8s := e.list(t)["k8s"]; condition(k8s, "Applied") != "True" {
			t.Fatalf("a pre-delete generation's report was stored: %+v", k8s)
		}
		e.s.Do(t, "PUT", statusesPath+"/k8s", report(2, time.Now(), "False", "False", "True")).Want(t, http.StatusOK)
		if k8s := e.list(t)["k8s"]; condition(k8s, "Applied") != "False" || k8s.ObservedGeneration != 2 {
			t.Fatalf("the deletion's report was not stored: %+v", k8s)
		}
		metrics := string(e.s.Do(t, "GET", "/metrics", nil).Body)
		for _, want := range []string{`outcome="older"} 1`, `outcome="future_generation"} 1`, `outcome="future_time"} 1`,
			`outcome="past_generation"} 1`, `outcome="stored"} 2`} {
			if !strings.Contains(metrics, "steward_adapter_status_reports_total{"+want) {
				t.Errorf("metrics lack steward_adapter_status_reports_total{%s", want)
			}
		}
	})
}
