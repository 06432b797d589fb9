package catalog

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServiceType_MarshalJSON(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason string
		st     ServiceType
		want   string
	}{
		"AbsentFieldsAreNull": {
			reason: "API.md shows every member, with null pointers and [] for no adapters.",
			st:     ServiceType{ID: "vm", Schema: json.RawMessage(`{}`), Lifecycle: LifecycleSimple, OnParentDelete: OnParentDeleteCascade},
			want:   `{"id":"vm","schema":{},"lifecycle":"simple","identity_attribute":null,"parent_service_type":null,"on_parent_delete":"cascade","required_adapters":[],"runtime":null,"builtin":false,"create_time":"0001-01-01T00:00:00Z","update_time":"0001-01-01T00:00:00Z"}`,
		},
		"AllFieldsSet": {
			reason: "Set fields are written under API.md's names.",
			st: ServiceType{
				ID: "app", Schema: json.RawMessage(`{"type":"object"}`), Lifecycle: "service",
				IdentityAttribute: new("metadata.name"), ParentServiceType: new("cluster"), OnParentDelete: OnParentDeleteCascade,
				RequiredAdapters: []string{"dns"}, Runtime: &Runtime{Kind: RuntimeKindKubernetes, Members: true},
			},
			want: `{"id":"app","schema":{"type":"object"},"lifecycle":"service","identity_attribute":"metadata.name","parent_service_type":"cluster","on_parent_delete":"cascade","required_adapters":["dns"],"runtime":{"kind":"kubernetes","members":true},"builtin":false,"create_time":"0001-01-01T00:00:00Z","update_time":"0001-01-01T00:00:00Z"}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(tc.st)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("%s\nMarshal(): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestServiceType_Clone(t *testing.T) {
	t.Parallel()
	orig := ServiceType{
		ID: "app", Schema: json.RawMessage(`{}`), IdentityAttribute: new("name"),
		RequiredAdapters: []string{"dns"}, Runtime: &Runtime{Kind: RuntimeKindSimple},
	}
	c := orig.clone()
	c.Schema[0] = '['
	*c.IdentityAttribute = "other"
	c.RequiredAdapters[0] = "other"
	c.Runtime.Kind = RuntimeKindKubernetes
	want := ServiceType{
		ID: "app", Schema: json.RawMessage(`{}`), IdentityAttribute: new("name"),
		RequiredAdapters: []string{"dns"}, Runtime: &Runtime{Kind: RuntimeKindSimple},
	}
	if diff := cmp.Diff(want, orig); diff != "" {
		t.Errorf("changing a clone changed the original: -want +got:\n%s", diff)
	}
}
