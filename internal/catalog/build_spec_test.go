package catalog

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/schema"
)

// smallVM is DCM's catalog item example, completed so an order needs no
// more than a name: vcpu.count editable up to 4, memory fixed, disks
// editable one by one.
const smallVM = `{"service_type": "vm",
	"defaults": {"guest_os": {"type": "fedora-39"}, "storage": {"disks": [{"name": "boot", "capacity": "20GB"}]}},
	"fields": [
		{"path": "vcpu.count", "display_name": "vCPUs", "editable": true, "default": 2, "validation_schema": {"maximum": 4}},
		{"path": "memory.size", "default": "2GB"},
		{"path": "metadata.name", "editable": true},
		{"path": "storage.disks[1]", "display_name": "Data disk", "editable": true},
		{"path": "metadata.labels[\"app.kubernetes.io/name\"]", "editable": true},
		{"path": "access", "editable": true, "validation_schema": {"type": "object", "required": ["ssh_public_key"]}}
	]}`

func userValues(tb testing.TB, s string) []UserValue {
	tb.Helper()
	var vs []UserValue
	if err := json.Unmarshal([]byte(s), &vs); err != nil {
		tb.Fatalf("decode user values %s: %v", s, err)
	}
	return vs
}

func TestBuildSpec(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason string
		item   string
		values string
		want   string // the spec, as JSON
		// wantFields is the invalid fields when the order is refused.
		wantFields []invalid.Field
	}{
		"Defaults": {reason: "Defaults, field defaults and service_type make the spec.", item: smallVM,
			values: `[{"path": "metadata.name", "value": "web-1"}]`,
			want: `{"service_type": "vm", "guest_os": {"type": "fedora-39"}, "vcpu": {"count": 2}, "memory": {"size": "2GB"},
				"metadata": {"name": "web-1"}, "storage": {"disks": [{"name": "boot", "capacity": "20GB"}]}}`},
		"UserValues": {reason: "User values replace defaults, append array items and reach quoted names.", item: smallVM,
			values: `[{"path": "metadata.name", "value": "web-1"}, {"path": "vcpu.count", "value": 4},
				{"path": "storage.disks[1]", "value": {"name": "data", "capacity": "100GB"}},
				{"path": "metadata.labels['app.kubernetes.io/name']", "value": "web"}]`,
			wantFields: []invalid.Field{{Field: "user_values[3].path", Path: "metadata.labels['app.kubernetes.io/name']",
				Message: `has ['app.kubernetes.io/name'], which is neither an array index nor a quoted property name`}}},
		"QuotedName": {reason: "A quoted name matches the field in its canonical form.", item: smallVM,
			values: `[{"path": "metadata.name", "value": "web-1"}, {"path": "vcpu.count", "value": 4},
				{"path": "storage.disks[1]", "value": {"name": "data", "capacity": "100GB"}},
				{"path": "metadata.labels[\"app.kubernetes.io/name\"]", "value": "web"}]`,
			want: `{"service_type": "vm", "guest_os": {"type": "fedora-39"}, "vcpu": {"count": 4}, "memory": {"size": "2GB"},
				"metadata": {"name": "web-1", "labels": {"app.kubernetes.io/name": "web"}},
				"storage": {"disks": [{"name": "boot", "capacity": "20GB"}, {"name": "data", "capacity": "100GB"}]}}`},
		"DCMMaximum": {reason: "DCM: validation_schema {maximum: 4} refuses 9.", item: smallVM,
			values:     `[{"path": "metadata.name", "value": "web-1"}, {"path": "vcpu.count", "value": 9}]`,
			wantFields: []invalid.Field{{Field: "user_values[1].value", Message: "must be at most 4", Path: "vcpu.count", DisplayName: "vCPUs"}}},
		"NestedFieldSchema": {reason: "A field schema's failures are named inside the value.", item: smallVM,
			values:     `[{"path": "metadata.name", "value": "web-1"}, {"path": "access", "value": {"ssh_public_key": 7}}]`,
			wantFields: []invalid.Field{{Field: "user_values[1].value.ssh_public_key", Message: "must be a string, not a number", Path: "access.ssh_public_key"}}},
		"NotEditable": {reason: "A field that is not editable cannot be set.", item: smallVM,
			values:     `[{"path": "metadata.name", "value": "web-1"}, {"path": "memory.size", "value": "64GB"}]`,
			wantFields: []invalid.Field{{Field: "user_values[1].path", Message: "is not an editable field of catalog item small-vm", Path: "memory.size"}}},
		"NotAField": {reason: "A path that is no field cannot be set, even inside an editable one.", item: smallVM,
			values: `[{"path": "metadata.name", "value": "web-1"}, {"path": "access.ssh_public_key", "value": "k"}, {"path": "guest_os.type", "value": "rhel-9"}]`,
			wantFields: []invalid.Field{
				{Field: "user_values[1].path", Message: "is not an editable field of catalog item small-vm", Path: "access.ssh_public_key"},
				{Field: "user_values[2].path", Message: "is not an editable field of catalog item small-vm", Path: "guest_os.type"},
			}},
		"Duplicate": {reason: "A field is set once.", item: smallVM,
			values:     `[{"path": "metadata.name", "value": "a"}, {"path": "metadata[\"name\"]", "value": "b"}]`,
			wantFields: []invalid.Field{{Field: "user_values[1].path", Message: "duplicates user_values[0].path", Path: "metadata.name"}}},
		"BadPath": {reason: "A path that does not parse is named.", item: smallVM,
			values:     `[{"path": "metadata..name", "value": "a"}]`,
			wantFields: []invalid.Field{{Field: "user_values[0].path", Path: "metadata..name", Message: "must be property names separated by dots (vcpu.count), with array indexes in brackets (env[0].value)"}}},
		"SpecErrorNamesValue": {reason: "The service type's schema is checked; a failure at a value names it.", item: smallVM,
			values: `[{"path": "metadata.name", "value": "Not A Name"}, {"path": "storage.disks[1]", "value": {"name": "boot", "capacity": "1PB"}}]`,
			wantFields: []invalid.Field{
				{Field: "user_values[0].value", Path: "metadata.name",
					Message: "does not have the form this field takes: Resource name, a DNS label.", Detail: "pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
				{Field: "user_values[1].value.capacity", Path: "storage.disks[1].capacity", DisplayName: "Data disk",
					Message: "does not have the form this field takes", Detail: "pattern ^[0-9]+(MB|GB|TB)$"},
				{Field: "user_values[1].value.name", Path: "storage.disks[1].name", DisplayName: "Data disk",
					Message: "must be unique, but item 0 has the same name"},
			}},
		"Missing": {reason: "What neither the item nor the order supplies is named in the spec.",
			item:       `{"service_type": "vm", "defaults": {"memory": {"size": "2GB"}}, "fields": [{"path": "vcpu.count", "editable": true}]}`,
			values:     `[]`,
			wantFields: []invalid.Field{{Field: "spec.guest_os", Message: "is required", Path: "guest_os"}, {Field: "spec.vcpu", Message: "is required", Path: "vcpu"}}},
		"ZeroFalse": {reason: "A default of 0 or false is a default.", item: `{"service_type": "database",
			"fields": [{"path": "engine", "default": "postgres"}, {"path": "version", "default": "16"},
				{"path": "replicas", "editable": true, "default": 0}, {"path": "provider_hints.x.ha", "default": false}]}`,
			values:     `[]`,
			wantFields: []invalid.Field{{Field: "spec.replicas", Message: "must be at least 1", Path: "replicas"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			it := item(t, tc.item)
			before := item(t, tc.item)
			values := userValues(t, tc.values)
			got, err := buildSpec(t.Context(), newServiceTypes(t), it, values)
			if diff := cmp.Diff(before, it); diff != "" {
				t.Errorf("%s\nbuildSpec changed the item: -before +after:\n%s", tc.reason, diff)
			}
			if tc.wantFields != nil {
				if diff := cmp.Diff(tc.wantFields, fieldsOf(t, err)); diff != "" {
					t.Errorf("%s\nbuildSpec fields: -want +got:\n%s", tc.reason, diff)
				}
				if got != nil {
					t.Errorf("%s\nbuildSpec returned a spec with its error: %v", tc.reason, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nbuildSpec: %v", tc.reason, err)
			}
			if diff := cmp.Diff(spec(t, tc.want), got); diff != "" {
				t.Errorf("%s\nbuildSpec: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestBuildSpec_ValuesFromGo(t *testing.T) {
	t.Parallel()
	it := item(t, smallVM)
	got, err := buildSpec(t.Context(), newServiceTypes(t), it, []UserValue{
		{Path: "metadata.name", Value: "web-1"},
		{Path: "vcpu.count", Value: 3}, // an int, not a float64
		{Path: "storage.disks[1]", Value: map[string]string{"name": "data", "capacity": "1TB"}},
	})
	if err != nil {
		t.Fatalf("buildSpec with Go values: %v", err)
	}
	want := spec(t, `{"service_type": "vm", "guest_os": {"type": "fedora-39"}, "vcpu": {"count": 3}, "memory": {"size": "2GB"},
		"metadata": {"name": "web-1"}, "storage": {"disks": [{"name": "boot", "capacity": "20GB"}, {"name": "data", "capacity": "1TB"}]}}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("buildSpec: -want +got:\n%s", diff)
	}
}

func TestBuildSpec_SpecsAreIndependent(t *testing.T) {
	t.Parallel()
	types := newServiceTypes(t)
	it := item(t, smallVM)
	first, err := buildSpec(t.Context(), types, it, userValues(t, `[{"path": "metadata.name", "value": "a"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.SetPath(first, "storage.disks[0].capacity", "1GB"); err != nil {
		t.Fatal(err)
	}
	second, err := buildSpec(t.Context(), types, it, userValues(t, `[{"path": "metadata.name", "value": "b"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := schema.GetPath(second, "storage.disks[0].capacity"); v != "20GB" {
		t.Errorf("changing one built spec changed the next: storage.disks[0].capacity = %v, want 20GB", v)
	}
}
