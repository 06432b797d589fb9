package sprm_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// A provider written for DCM registers unchanged: its single service_type
// stands for service_types, and metadata objects (resources{total_cpu, …})
// become dotted labels placement policies can match.
func TestRegister_DCMPayload(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, fast)
		p := providertest.New(t)
		dcm := func(extra map[string]any) map[string]any {
			body := map[string]any{
				"name": "kubevirt-sp", "endpoint": p.Registration("x", "vm").Endpoint, "display_name": "KubeVirt",
				"service_type": "vm", "schema_version": "v1alpha1", "operations": []string{},
				"metadata": map[string]any{"region": "us-east-1", "zone": "a", "gpu": true,
					"resources": map[string]any{"total_cpu": 64, "total_memory": "256GB", "total_storage": 2000.5}},
			}
			for k, v := range extra {
				if v == nil {
					delete(body, k)
				} else {
					body[k] = v
				}
			}
			return body
		}
		s.Do(t, "POST", "/api/v1/providers", dcm(nil)).Want(t, http.StatusCreated)
		var got struct {
			ServiceTypes []string          `json:"service_types"`
			Metadata     map[string]string `json:"metadata"`
		}
		s.Do(t, "GET", "/api/v1/providers/kubevirt-sp", nil).Want(t, http.StatusOK).JSON(t, &got)
		want := map[string]string{"region": "us-east-1", "zone": "a", "gpu": "true", "resources.total_cpu": "64",
			"resources.total_memory": "256GB", "resources.total_storage": "2000.5"}
		if diff := cmp.Diff(want, got.Metadata); diff != "" || len(got.ServiceTypes) != 1 || got.ServiceTypes[0] != "vm" {
			t.Errorf("service_types %v, metadata (-want +got):\n%s", got.ServiceTypes, diff)
		}

		for _, tc := range []struct {
			extra map[string]any
			field string
		}{
			{map[string]any{"service_type": nil}, "service_types"},
			{map[string]any{"service_types": []string{"container"}}, "service_type"},
			{map[string]any{"metadata": map[string]any{"tags": []string{"a"}}}, "metadata.tags"},
			{map[string]any{"metadata": map[string]any{"resources": map[string]any{"nodes": nil}}}, "metadata.resources.nodes"},
		} {
			pr := s.Do(t, "POST", "/api/v1/providers", dcm(tc.extra)).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
			if len(pr.Fields) != 1 || pr.Fields[0]["field"] != tc.field {
				t.Errorf("%v: fields %+v, want one naming %s", tc.extra, pr.Fields, tc.field)
			}
		}
	})
}
