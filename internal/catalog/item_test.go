package catalog

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/invalid"
)

// item decodes a catalog item as the create handler would, normalized.
func item(tb testing.TB, s string) Item {
	tb.Helper()
	var p CreateItemParams
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		tb.Fatalf("decode item %s: %v", s, err)
	}
	it := Item{ID: "small-vm", DisplayName: p.DisplayName, ServiceType: p.ServiceType, Defaults: p.Defaults, Fields: p.Fields}
	if err := normalizeItem(&it); err != nil {
		tb.Fatalf("normalize item %s: %v", s, err)
	}
	return it
}

// fieldsOf returns the fields of an *invalid.Error, or fails.
func fieldsOf(tb testing.TB, err error) []invalid.Field {
	tb.Helper()
	var inv *invalid.Error
	var imm *invalid.ImmutableError
	switch {
	case errors.As(err, &inv):
		return inv.Fields
	case errors.As(err, &imm):
		return imm.Fields
	}
	tb.Fatalf("error = %v (%T), want *invalid.Error or *invalid.ImmutableError", err, err)
	return nil
}

func TestCheckItem(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason string
		item   string
		// want is the invalid fields, by name then message; nil means valid.
		want []invalid.Field
	}{
		"DCMExample": {reason: "An item may leave required properties to its orders.", item: `{"service_type": "vm",
			"defaults": {"memory": {"size": "2GB"}},
			"fields": [{"path": "vcpu.count", "editable": true, "default": 2, "validation_schema": {"maximum": 4}}]}`},
		"Empty": {reason: "An item of a type, with nothing else, is a fragment.", item: `{"service_type": "vm"}`},
		"ArrayFields": {reason: "Array items may be set one field at a time; their other required properties stay open.",
			item: `{"service_type": "container", "defaults": {"image": {"reference": "nginx"}},
			"fields": [{"path": "process.env[0].value", "default": "1"}, {"path": "process.env[0].name", "default": "A"}]}`},
		"AlternativeOpen": {reason: "container needs image or process; orders may add either.", item: `{"service_type": "container"}`},
		"ItemsOpen": {reason: "An array may still lack the items its schema asks for (here a boot disk).",
			item: `{"service_type": "vm", "defaults": {"storage": {"disks": [{"name": "data", "capacity": "1TB"}]}},
			"fields": [{"path": "storage.disks[1]", "editable": true}]}`},
		"ItemValuesChecked": {reason: "Items the defaults do hold are checked.",
			item: `{"service_type": "vm", "defaults": {"storage": {"disks": [{"name": "Data"}]}}}`,
			want: []invalid.Field{{Field: "defaults.storage.disks[0].name", Message: "does not have the form this field takes: Disk name, unique within the VM; the root volume is boot.", Detail: "pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}}},
		"MatchingServiceType": {reason: "defaults may repeat the item's service_type.",
			item: `{"service_type": "vm", "defaults": {"service_type": "vm"}}`},
		"NoServiceType": {reason: "service_type is required.", item: `{}`,
			want: []invalid.Field{{Field: "service_type", Message: "is required"}}},
		"UnknownServiceType": {reason: "service_type names a known type.", item: `{"service_type": "storage"}`,
			want: []invalid.Field{{Field: "service_type", Message: "is not a known service type"}}},
		"OtherServiceType": {reason: "defaults.service_type may not contradict the item.",
			item: `{"service_type": "vm", "defaults": {"service_type": "container"}}`,
			want: []invalid.Field{{Field: "defaults.service_type", Message: `must be "vm", the item's service_type, or absent`}}},
		"BadDefault": {reason: "A value the item supplies is checked, even where a field may replace it.",
			item: `{"service_type": "vm", "defaults": {"vcpu": {"count": 0}}, "fields": [{"path": "vcpu.count", "editable": true}]}`,
			want: []invalid.Field{{Field: "defaults.vcpu.count", Message: "must be at least 1"}}},
		"BadFieldDefault": {reason: "A bad value from a field's default names that default.",
			item: `{"service_type": "vm", "fields": [{"path": "vcpu", "default": {"count": "two"}}]}`,
			want: []invalid.Field{{Field: "fields[0].default.count", Message: "must be an integer, not a string"}}},
		"LastDefaultWins": {reason: "The field that wrote a location last is named.",
			item: `{"service_type": "vm", "fields": [{"path": "vcpu", "default": {"count": 1}}, {"path": "vcpu.count", "default": -1}]}`,
			want: []invalid.Field{{Field: "fields[1].default", Message: "must be at least 1"}}},
		"DefaultBreaksFieldSchema": {reason: "A field's default satisfies its validation_schema.",
			item: `{"service_type": "vm", "fields": [{"path": "vcpu.count", "editable": true, "default": 8, "validation_schema": {"maximum": 4}}]}`,
			want: []invalid.Field{{Field: "fields[0].default", Message: "must be at most 4"}}},
		"DefaultsBreakFieldSchema": {reason: "The value defaults put at an editable field satisfies its validation_schema.",
			item: `{"service_type": "vm", "defaults": {"vcpu": {"count": 8}}, "fields": [{"path": "vcpu.count", "editable": true, "validation_schema": {"maximum": 4}}]}`,
			want: []invalid.Field{{Field: "defaults.vcpu.count", Message: "must be at most 4"}}},
		"BadPaths": {reason: "Each path parses, is unique and leaves service_type alone.", item: `{"service_type": "vm", "fields": [
			{"path": "vcpu.count"}, {"path": "vcpu..count"}, {"path": "vcpu[\"count\"]"}, {"path": "service_type"}, {"path": ""}]}`,
			want: []invalid.Field{
				{Field: "fields[1].path", Message: "must be property names separated by dots (vcpu.count), with array indexes in brackets (env[0].value)"},
				{Field: "fields[2].path", Message: "duplicates fields[0].path"},
				{Field: "fields[3].path", Message: "cannot be under service_type: the item's service_type sets it"},
				{Field: "fields[4].path", Message: "is required"},
			}},
		"SchemaNotEditable": {reason: "validation_schema is only for editable fields.",
			item: `{"service_type": "vm", "fields": [{"path": "vcpu.count", "validation_schema": {"maximum": 4}}]}`,
			want: []invalid.Field{{Field: "fields[0].validation_schema", Message: "is allowed only on an editable field"}}},
		"NullSchema": {reason: "A null validation_schema is none.",
			item: `{"service_type": "vm", "fields": [{"path": "vcpu.count", "validation_schema": null}]}`},
		"SchemaDoesNotCompile": {reason: "validation_schema compiles; errors are named inside it.",
			item: `{"service_type": "vm", "fields": [{"path": "vcpu.count", "editable": true, "validation_schema": {"maximum": "four"}}]}`,
			want: []invalid.Field{{Field: "fields[0].validation_schema.maximum", Message: "must be a number, not a string"}}},
		"SchemaNotObject": {reason: "validation_schema is an object.",
			item: `{"service_type": "vm", "fields": [{"path": "vcpu.count", "editable": true, "validation_schema": true}]}`,
			want: []invalid.Field{{Field: "fields[0].validation_schema", Message: "must be a JSON object"}}},
		"PathThroughScalar": {reason: "A default that cannot be set names the field's path.",
			item: `{"service_type": "vm", "defaults": {"vcpu": 2}, "fields": [{"path": "vcpu.count", "default": 2}]}`,
			want: []invalid.Field{{Field: "fields[0].path", Message: "cannot set vcpu.count: vcpu is a number, not an object"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := checkItem(t.Context(), newServiceTypes(t), item(t, tc.item))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("%s\ncheckItem: %v", tc.reason, err)
				}
				return
			}
			if diff := cmp.Diff(tc.want, fieldsOf(t, err)); diff != "" {
				t.Errorf("%s\ncheckItem fields: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestApplyPatch(t *testing.T) {
	t.Parallel()
	base := `{"display_name": "Small VM", "service_type": "vm",
		"defaults": {"memory": {"size": "2GB"}, "guest_os": {"type": "fedora-39"}},
		"fields": [{"path": "vcpu.count", "editable": true}]}`
	cases := map[string]struct {
		reason string
		patch  string
		want   string // the item after the patch, as CreateItemParams JSON
		// wantFields are the invalid fields, when the patch is refused.
		wantFields []string
	}{
		"Nothing": {reason: "An empty patch keeps everything.", patch: `{}`, want: base},
		"DisplayName": {reason: "A present member replaces.", patch: `{"display_name": "Tiny"}`,
			want: `{"display_name": "Tiny", "service_type": "vm", "defaults": {"memory": {"size": "2GB"}, "guest_os": {"type": "fedora-39"}},
			"fields": [{"path": "vcpu.count", "editable": true}]}`},
		"NullDisplayName": {reason: "null resets display_name to its default, the id.", patch: `{"display_name": null}`,
			want: `{"display_name": "small-vm", "service_type": "vm", "defaults": {"memory": {"size": "2GB"}, "guest_os": {"type": "fedora-39"}},
			"fields": [{"path": "vcpu.count", "editable": true}]}`},
		"MergeDefaults": {reason: "defaults merge: null removes, objects merge, values replace.",
			patch: `{"defaults": {"guest_os": null, "memory": {"size": "4GB"}, "vcpu": {"count": 1}}}`,
			want: `{"display_name": "Small VM", "service_type": "vm", "defaults": {"memory": {"size": "4GB"}, "vcpu": {"count": 1}},
			"fields": [{"path": "vcpu.count", "editable": true}]}`},
		"NullDefaults": {reason: "null defaults is none.", patch: `{"defaults": null}`,
			want: `{"display_name": "Small VM", "service_type": "vm", "defaults": {}, "fields": [{"path": "vcpu.count", "editable": true}]}`},
		"ReplaceFields": {reason: "fields is replaced whole.", patch: `{"fields": [{"path": "memory.size", "editable": true}]}`,
			want: `{"display_name": "Small VM", "service_type": "vm", "defaults": {"memory": {"size": "2GB"}, "guest_os": {"type": "fedora-39"}},
			"fields": [{"path": "memory.size", "editable": true}]}`},
		"NullFields": {reason: "null fields is none.", patch: `{"fields": null}`,
			want: `{"display_name": "Small VM", "service_type": "vm", "defaults": {"memory": {"size": "2GB"}, "guest_os": {"type": "fedora-39"}}, "fields": []}`},
		"SameServiceType":  {reason: "The current service_type may be repeated.", patch: `{"service_type": "vm"}`, want: base},
		"OtherServiceType": {reason: "service_type is immutable.", patch: `{"service_type": "container"}`, wantFields: []string{"service_type"}},
		"NullServiceType":  {reason: "service_type cannot be removed.", patch: `{"service_type": null}`, wantFields: []string{"service_type"}},
		"BadTypes": {reason: "Members of the wrong type are named.", patch: `{"display_name": 3, "defaults": [1], "fields": {"path": "x"}}`,
			wantFields: []string{"display_name", "defaults", "fields"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var patch ItemPatch
			if err := json.Unmarshal([]byte(tc.patch), &patch); err != nil {
				t.Fatal(err)
			}
			it := item(t, base)
			err := applyPatch(&it, patch)
			if tc.wantFields != nil {
				var got []string
				for _, f := range fieldsOf(t, err) {
					got = append(got, f.Field)
				}
				if diff := cmp.Diff(tc.wantFields, got); diff != "" {
					t.Errorf("%s\napplyPatch(%s) fields: -want +got:\n%s", tc.reason, tc.patch, diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\napplyPatch(%s): %v", tc.reason, tc.patch, err)
			}
			if err := normalizeItem(&it); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(item(t, tc.want), it); diff != "" {
				t.Errorf("%s\napplyPatch(%s): -want +got:\n%s", tc.reason, tc.patch, diff)
			}
		})
	}
}
