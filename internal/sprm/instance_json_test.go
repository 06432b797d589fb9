package sprm

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// The hand-written encoder of instance views says what encoding/json says
// of them, member for member: for an instance read whole (its documents
// decoded) and for one read for a list (passed through as stored). A
// field added to Instance or instanceView without the encoder fails here.
func TestInstanceJSON_MatchesEncodingJSON(t *testing.T) {
	deleted := time.Date(2026, 11, 24, 14, 0, 0, 123456789, time.UTC)
	restarts := int64(3)
	whole := Instance{ID: "8b7e", Project: "default", Name: `my "db" <b>&` + "\u2028\x01\xff", ProviderName: "pg-sp",
		ServiceType: "database", Status: provider.StatusDeleting, StatusMessage: "line\nbreak\ttab", RestartCount: &restarts,
		Spec:     map[string]any{"service_type": "database", "size": map[string]any{"gb": 10.0}, "tags": []any{"a", nil}},
		Outputs:  provider.Outputs{"host": "db<1>.example", "port": 5432.0},
		Synced:   &provider.Sync{InSync: false, Differences: []string{"connection_limit: want 20, found 100"}, ObservedTime: deleted},
		Deletion: &Deletion{Status: TaskPending, CleanupTaskID: "t<1>"}, Version: 9,
		CreateTime: deleted.Add(-time.Hour), UpdateTime: deleted.Add(time.Minute), DeleteTime: &deleted, DeletedAt: &deleted}
	view := viewInstance(whole)
	want := decodeJSON(t, marshal(t, view))
	if got := decodeJSON(t, view.appendJSON(nil)); !reflect.DeepEqual(got, want) {
		t.Errorf("an instance read whole:\n got  %v\n want %v", got, want)
	}

	listed := whole
	listed.Spec, listed.Outputs, listed.Synced = nil, nil, nil
	listed.specJSON, listed.outputsJSON, listed.syncedJSON = marshal(t, whole.Spec), marshal(t, whole.Outputs), marshal(t, whole.Synced)
	if got := decodeJSON(t, viewInstance(listed).appendJSON(nil)); !reflect.DeepEqual(got, want) {
		t.Errorf("an instance read for a list:\n got  %v\n want %v", got, want)
	}

	bare := Instance{ID: "x", Outputs: provider.Outputs{}}
	if got, want := decodeJSON(t, viewInstance(bare).appendJSON(nil)), decodeJSON(t, marshal(t, viewInstance(bare))); !reflect.DeepEqual(got, want) {
		t.Errorf("an instance with nothing set:\n got  %v\n want %v", got, want)
	}

	page := store.Page[instanceView]{Results: []instanceView{view, viewInstance(listed)}, NextPageToken: "tok<en>"}
	decoded := store.Page[instanceView]{Results: []instanceView{view, view}, NextPageToken: "tok<en>"}
	if got, want := decodeJSON(t, appendInstancePage(nil, page)), decodeJSON(t, marshal(t, decoded)); !reflect.DeepEqual(got, want) {
		t.Errorf("a page:\n got  %v\n want %v", got, want)
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	if !json.Valid(b) {
		t.Fatalf("not valid JSON: %s", b)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
