package policy_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

func TestPolicies_CreateGetListPatchDelete(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		created := e.create(t, "small-vms", map[string]any{
			"display_name": "Small VMs", "policy_type": "GLOBAL", "label_selector": map[string]string{"service_type": "vm"},
			"rego_code": "package steward.small\n\nmain := {\"patch\": {\"size\": \"s\"}}\n",
		})
		if created.ID != "small-vms" || created.Path != "policies/small-vms" || created.Priority != 500 || !created.Enabled ||
			created.ETag == "" || created.CreateTime.IsZero() {
			t.Fatalf("created %+v; want the client id, priority 500 and enabled by default", created)
		}
		var got policyView
		r := e.do(t, "GET", "/api/v1/policies/small-vms", nil).want(t, http.StatusOK)
		r.json(t, &got)
		if got.RegoCode != created.RegoCode || got.LabelSelector["service_type"] != "vm" || r.header.Get("ETag") != created.ETag {
			t.Fatalf("read back %+v (ETag %s), want what was created", got, r.header.Get("ETag"))
		}
		generated := e.create(t, "", map[string]any{"display_name": "Audit", "policy_type": "USER", "priority": 7, "enabled": false,
			"rego_code": "package steward.audit\n\nmain := {}\n"})
		if len(generated.ID) != 36 || generated.Enabled {
			t.Fatalf("created %+v; want a UUID and enabled false", generated)
		}

		var page struct {
			Results       []policyView `json:"results"`
			NextPageToken string       `json:"next_page_token"`
		}
		e.do(t, "GET", "/api/v1/policies?max_page_size=1", nil).want(t, http.StatusOK).json(t, &page)
		if len(page.Results) != 1 || page.Results[0].ID != "small-vms" || page.NextPageToken == "" {
			t.Fatalf("first page %+v", page)
		}
		e.do(t, "GET", "/api/v1/policies?max_page_size=1&page_token="+page.NextPageToken, nil).want(t, http.StatusOK).json(t, &page)
		if len(page.Results) != 1 || page.Results[0].ID != generated.ID || page.NextPageToken != "" {
			t.Fatalf("second page %+v", page)
		}
		for query, want := range map[string]string{"policy_type=USER": generated.ID, "enabled=true": "small-vms", "enabled=false": generated.ID} {
			e.do(t, "GET", "/api/v1/policies?"+query, nil).want(t, http.StatusOK).json(t, &page)
			if len(page.Results) != 1 || page.Results[0].ID != want {
				t.Errorf("?%s listed %+v, want only %s", query, page.Results, want)
			}
		}
		e.do(t, "GET", "/api/v1/policies?policy_type=ROOT", nil).problem(t, http.StatusBadRequest, "INVALID_ARGUMENT")

		var patched policyView
		e.do(t, "PATCH", "/api/v1/policies/small-vms", map[string]any{"priority": 10, "label_selector": map[string]any{"env": "prod"}},
			"If-Match", created.ETag).want(t, http.StatusOK).json(t, &patched)
		if patched.Priority != 10 || patched.LabelSelector["env"] != "prod" || patched.LabelSelector["service_type"] != "vm" ||
			patched.ETag == created.ETag || patched.DisplayName != "Small VMs" {
			t.Fatalf("patched %+v; want priority 10, the selector merged, a new etag", patched)
		}
		patched = policyView{}
		e.do(t, "PATCH", "/api/v1/policies/small-vms", map[string]any{"label_selector": map[string]any{"env": nil}}).
			want(t, http.StatusOK).json(t, &patched)
		if _, still := patched.LabelSelector["env"]; still || len(patched.LabelSelector) != 1 {
			t.Fatalf("a null key should leave the selector %v without env", patched.LabelSelector)
		}
		// The etag read before the patches is stale now.
		e.do(t, "PATCH", "/api/v1/policies/small-vms", map[string]any{"priority": 11}, "If-Match", created.ETag).
			problem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		e.do(t, "DELETE", "/api/v1/policies/small-vms", nil, "If-Match", created.ETag).
			problem(t, http.StatusPreconditionFailed, "PRECONDITION_FAILED")
		e.do(t, "PATCH", "/api/v1/policies/small-vms", map[string]any{"policy_type": "USER"}).problem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		e.do(t, "PATCH", "/api/v1/policies/small-vms", map[string]any{"priority": "high"}).problem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		e.do(t, "PATCH", "/api/v1/policies/nope", map[string]any{"priority": 3}).problem(t, http.StatusNotFound, "POLICY_NOT_FOUND")

		e.do(t, "DELETE", "/api/v1/policies/small-vms", nil, "If-Match", patched.ETag).want(t, http.StatusNoContent)
		e.do(t, "GET", "/api/v1/policies/small-vms", nil).problem(t, http.StatusNotFound, "POLICY_NOT_FOUND")
		e.do(t, "DELETE", "/api/v1/policies/small-vms", nil).problem(t, http.StatusNotFound, "POLICY_NOT_FOUND")
	})
}

func TestPolicies_DuplicatesInALevelConflict(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.create(t, "quota", patchSize("Quota", "GLOBAL", 10, "steward.quota", "s"))
		e.create(t, "tenant-quota", patchSize("Quota", "TENANT", 10, "steward.tquota", "m")) // another level: fine

		e.do(t, "POST", "/api/v1/policies?id=quota", patchSize("Other", "GLOBAL", 11, "steward.q2", "s")).
			problem(t, http.StatusConflict, "POLICY_ALREADY_EXISTS")
		e.do(t, "POST", "/api/v1/policies", patchSize("Other", "GLOBAL", 10, "steward.q3", "s")).
			problem(t, http.StatusConflict, "POLICY_ALREADY_EXISTS")
		e.do(t, "POST", "/api/v1/policies", patchSize("Quota", "GLOBAL", 12, "steward.q4", "s")).
			problem(t, http.StatusConflict, "POLICY_ALREADY_EXISTS")
		e.create(t, "second", patchSize("Second", "GLOBAL", 20, "steward.second", "s"))
		e.do(t, "PATCH", "/api/v1/policies/second", map[string]any{"priority": 10}).problem(t, http.StatusConflict, "POLICY_ALREADY_EXISTS")
		e.do(t, "PATCH", "/api/v1/policies/second", map[string]any{"display_name": "Quota"}).problem(t, http.StatusConflict, "POLICY_ALREADY_EXISTS")
		// A policy keeps its own priority and name when patched.
		e.do(t, "PATCH", "/api/v1/policies/second", map[string]any{"priority": 20, "display_name": "Second"}).want(t, http.StatusOK)
	})
}

func TestPolicies_RefusesInvalidFields(t *testing.T) {
	t.Parallel()
	e := setup(t, store.SQLite)
	ok := patchSize("Fine", "GLOBAL", 1, "steward.fine", "s")
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range ok {
			m[kk] = vv
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for name, body := range map[string]map[string]any{
		"no display name": with("display_name", nil), "blank display name": with("display_name", "  "),
		"unknown type": with("policy_type", "ROOT"), "no type": with("policy_type", nil),
		"priority zero": with("priority", 0), "priority too high": with("priority", 1001),
		"no rego": with("rego_code", nil), "priority not a number": with("priority", "1"),
	} {
		p := e.do(t, "POST", "/api/v1/policies", body).problem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		if p["fields"] == nil {
			t.Errorf("%s: the problem names no field: %v", name, p)
		}
	}
	e.do(t, "POST", "/api/v1/policies?id=Not_An_Id", ok).problem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
}

func TestPolicies_InvalidRegoLeavesThePreviousSetInForce(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		p := e.create(t, "sizer", patchSize("Sizer", "GLOBAL", 1, "steward.sizer", "small"))
		if got := e.evaluate(t, vmSpec()); got.EvaluatedServiceInstance.Spec["size"] != "small" || got.Status != "MODIFIED" {
			t.Fatalf("before: evaluated %+v, want size small", got)
		}

		pr := e.do(t, "PATCH", "/api/v1/policies/sizer", map[string]any{"rego_code": "package steward.sizer\n\nmain := {\"patch\": "}).
			problem(t, http.StatusBadRequest, "INVALID_POLICY")
		if errs, _ := pr["errors"].([]any); len(errs) == 0 || !strings.Contains(errs[0].(string), "rego_parse_error") {
			t.Errorf("INVALID_POLICY should carry OPA's errors: %v", pr)
		}
		e.do(t, "PATCH", "/api/v1/policies/sizer", map[string]any{"rego_code": "package steward.sizer\n\nallow := true\n"}).
			problem(t, http.StatusBadRequest, "INVALID_POLICY") // no main
		e.do(t, "PATCH", "/api/v1/policies/sizer", map[string]any{"rego_code": "package steward.sizer\n\nmain := http.send({})\n"}).
			problem(t, http.StatusBadRequest, "INVALID_POLICY") // no network from policies
		e.do(t, "POST", "/api/v1/policies", map[string]any{"display_name": "Broken", "policy_type": "USER", "enabled": false,
			"rego_code": "package broken\n\nmain := x\n"}).problem(t, http.StatusBadRequest, "INVALID_POLICY") // even disabled

		var got policyView
		e.do(t, "GET", "/api/v1/policies/sizer", nil).want(t, http.StatusOK).json(t, &got)
		if got.RegoCode != p.RegoCode || got.ETag != p.ETag {
			t.Fatalf("a refused change was stored: %+v", got)
		}
		if got := e.evaluate(t, vmSpec()); got.EvaluatedServiceInstance.Spec["size"] != "small" {
			t.Fatalf("after refused changes: evaluated %+v, want the previous set (size small)", got)
		}
		e.do(t, "PATCH", "/api/v1/policies/sizer", map[string]any{"rego_code": "package steward.sizer\n\nmain := {\"patch\": {\"size\": \"large\"}}\n"}).
			want(t, http.StatusOK)
		if got := e.evaluate(t, vmSpec()); got.EvaluatedServiceInstance.Spec["size"] != "large" {
			t.Fatalf("after a good change: evaluated %+v, want size large at once", got)
		}
	})
}

func TestPolicies_PackageCollisionIsInvalid(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.create(t, "first", patchSize("First", "GLOBAL", 1, "steward.shared", "s"))
		pr := e.do(t, "POST", "/api/v1/policies?id=second", patchSize("Second", "USER", 1, "steward.shared", "m")).
			problem(t, http.StatusBadRequest, "INVALID_POLICY")
		if pr["policy_id"] != "second" {
			t.Errorf("the collision should blame the new policy: %v", pr)
		}
		// Disabled, it is not in the set, so it may share the package...
		body := patchSize("Second", "USER", 1, "steward.shared", "m")
		body["enabled"] = false
		e.create(t, "second", body)
		// ...until it is enabled.
		e.do(t, "PATCH", "/api/v1/policies/second", map[string]any{"enabled": true}).problem(t, http.StatusBadRequest, "INVALID_POLICY")
		if got := e.evaluate(t, vmSpec()); got.EvaluatedServiceInstance.Spec["size"] != "s" {
			t.Fatalf("evaluated %+v, want only the first policy", got)
		}
	})
}
