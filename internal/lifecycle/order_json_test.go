package lifecycle

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// The hand-written encoder of order views says what encoding/json says of
// them, member for member: for an order read whole (labels, values and
// attribute sets decoded) and for one read for a list (passed through as
// stored). A field added to Order or orderView without the encoder fails
// here.
func TestOrderJSON_MatchesEncodingJSON(t *testing.T) {
	parent := `pa"rent</script>`
	deleted := time.Date(2026, 11, 24, 14, 0, 0, 123456789, time.UTC)
	o := Order{ID: "web-1", Project: "default", CatalogItemID: "small-vm", ServiceType: "vm",
		DisplayName: "my \"vm\" <b>&\u2028\x01\xff", Labels: map[string]string{"env": "prod", "t<": "&"},
		UserValues: []catalog.UserValue{{Path: "vcpu.count", Value: 2.0}, {Path: "tags", Value: []any{"a", nil}}},
		ParentID:   &parent, State: "deleting", Lifecycle: "simple", Version: 7, Generation: 3,
		Attributes: order.Attributes{Candidate: map[string]any{"x": 1.0}, Active: map[string]any{"y": map[string]any{"z": "é"}}},
		InstanceID: "8b7e", ProviderName: "vm-sp", Status: provider.StatusDeleted, StatusMessage: "line\nbreak\ttab",
		LastError:  `deletion waits for adapter k8s (Health=False: "stuck")`,
		CreateTime: deleted.Add(-time.Hour), UpdateTime: deleted.Add(time.Minute), DeletedAt: &deleted,
		ExpireTime: &deleted}
	attrs, _ := json.Marshal(o.Attributes)
	view := orderView{Order: o, Attributes: attrs, Path: "catalog-item-instances/web-1", ETag: `"7"`, DeleteTime: &deleted,
		Outputs: json.RawMessage(`{"host":"db<1>.example","port":5432,"tls":true}`),
		Conditions: []Condition{{Type: "Ready", Status: "False", Reason: "Deleting", Message: "m<>",
			LastTransitionTime: deleted}}}
	want := decode(t, mustMarshal(t, view))

	if got := decode(t, view.appendJSON(nil)); !reflect.DeepEqual(got, want) {
		t.Errorf("an order read whole:\n got  %v\n want %v", got, want)
	}

	listed := view
	listed.Labels, listed.UserValues = nil, nil
	listed.labelsJSON = mustMarshal(t, o.Labels)
	listed.userValuesJSON = mustMarshal(t, o.UserValues)
	if got := decode(t, listed.appendJSON(nil)); !reflect.DeepEqual(got, want) {
		t.Errorf("an order read for a list:\n got  %v\n want %v", got, want)
	}

	shown := view
	shown.Cleanup = &[]Cleanup{{TaskID: "t<1>", InstanceID: "old", ProviderName: "vm-sp", Status: "PENDING",
		RequestTime: deleted}, {TaskID: "t2"}}
	if got, want := decode(t, shown.appendJSON(nil)), decode(t, mustMarshal(t, shown)); !reflect.DeepEqual(got, want) {
		t.Errorf("an order read with its cleanup:\n got  %v\n want %v", got, want)
	}
	shown.Cleanup = &[]Cleanup{}
	if got, want := decode(t, shown.appendJSON(nil)), decode(t, mustMarshal(t, shown)); !reflect.DeepEqual(got, want) {
		t.Errorf("an order read with nothing being removed:\n got  %v\n want %v", got, want)
	}

	bare := orderView{Order: Order{ID: "x"}}
	if got, want := decode(t, bare.appendJSON(nil)), decode(t, mustMarshal(t, bare)); !reflect.DeepEqual(got, want) {
		t.Errorf("an empty order:\n got  %v\n want %v", got, want)
	}

	page := store.Page[orderView]{Results: []orderView{view, listed}, NextPageToken: "tok<en>"}
	decoded := store.Page[orderView]{Results: []orderView{view, view}, NextPageToken: "tok<en>"}
	if got, want := decode(t, appendOrderPage(nil, page)), decode(t, mustMarshal(t, decoded)); !reflect.DeepEqual(got, want) {
		t.Errorf("a page:\n got  %v\n want %v", got, want)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, b []byte) any {
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
