package lifecycle_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/lifecycle"
)

// view is a lifecycle as the API answers it.
type view struct {
	lifecycle.Lifecycle
	Path string `json:"path"`
	ETag string `json:"etag"`
}

type page struct {
	Results       []view `json:"results"`
	NextPageToken string `json:"next_page_token"`
}

// mini is a small lifecycle in full: start → up (promote), a redeploy
// loop, a two-phase delete. Its label and the resource transfers' error
// states are left to their defaults.
func mini() map[string]any {
	return map[string]any{
		"initial_state": "start",
		"states": []map[string]any{
			{"name": "start", "model_state": "candidate"},
			{"name": "up", "model_state": "active", "export_resources": true, "label": "success"},
			{"name": "deleting", "model_state": "active", "purge_resources": true},
			{"name": "terminated", "model_state": "inactive", "deleted": true},
		},
		"transfers": []map[string]any{
			{"source": "start", "target": "up", "trigger": "auto", "target_operation": "promote"},
			{"source": "up", "target": "up", "trigger": "resource", "description": "redeploy"},
			{"source": "up", "target": "deleting", "trigger": "on_delete"},
			{"source": "deleting", "target": "terminated", "trigger": "resource"},
		},
	}
}

// approvalCompact is a lifecycle with an approval gate in compact form.
// Its states are not in alphabetical order, so a store that reordered
// them would show.
const approvalCompact = `{"initial_state": "start",
  "states": {"start": "candidate", "designed": "designed", "creating": "active export",
             "up": "active export success", "failed": "active export danger",
             "rejected": "inactive deleted danger", "update_start": "candidate",
             "update_rejected": "candidate warning abort=up",
             "deleting": "active purge", "terminated": "inactive deleted"},
  "transfers": ["start -> designed: auto validate | rejected",
                "designed -> creating: api promote  # approve",
                "designed -> rejected: api  # refuse",
                "creating, up, failed -> up: resource | failed",
                "up -> update_start: on_update",
                "update_start -> creating: auto validate promote | update_rejected",
                "update_rejected -> update_start: on_update",
                "deleting -> terminated: resource"],
  "on_delete": "deleting"}`

// approval is a create body with approvalCompact.
func approval() map[string]any {
	return map[string]any{"compact": json.RawMessage(approvalCompact)}
}

// hasCompact reports whether the answer carries a compact form (JSON null
// decodes into a RawMessage as "null").
func hasCompact(v view) bool { return len(v.Compact) > 0 && string(v.Compact) != "null" }

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("decode %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}

// fields returns the fields a problem names, sorted.
func fields(p apitest.Problem) []string {
	var out []string
	for _, f := range p.Fields {
		out = append(out, f["field"].(string))
	}
	slices.Sort(out)
	return out
}

// listAll pages through the lifecycles with pages of size n.
func listAll(t *testing.T, s *apitest.Server, n int) []view {
	t.Helper()
	var all []view
	token := ""
	for range 100 {
		var p page
		path := "/api/v1/lifecycles?max_page_size=" + strconv.Itoa(n)
		if token != "" {
			path += "&page_token=" + token
		}
		s.Do(t, http.MethodGet, path, nil).Want(t, http.StatusOK).JSON(t, &p)
		if len(p.Results) > n {
			t.Fatalf("page of %d results, asked for %d", len(p.Results), n)
		}
		all = append(all, p.Results...)
		if token = p.NextPageToken; token == "" {
			return all
		}
	}
	t.Fatal("pages never end")
	return nil
}

func ids(vs []view) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.ID
	}
	return out
}
