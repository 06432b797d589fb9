package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/invalid"
)

// newServiceTypes returns a registry of the built-ins; each test gets its own.
func newServiceTypes(tb testing.TB) *ServiceTypes {
	tb.Helper()
	r, err := NewServiceTypes(nil)
	if err != nil {
		tb.Fatalf("NewServiceTypes: %v", err)
	}
	return r
}

// spec decodes a JSON object as a request decoder would.
func spec(tb testing.TB, s string) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		tb.Fatalf("decode spec %s: %v", s, err)
	}
	return m
}

func TestServiceTypes_List(t *testing.T) {
	t.Parallel()
	r := newServiceTypes(t)
	var got []string
	list, err := r.List(t.Context(), "", 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range list {
		got = append(got, st.ID)
		if st.Lifecycle != LifecycleSimple || st.OnParentDelete != OnParentDeleteCascade ||
			st.IdentityAttribute != nil || st.ParentServiceType != nil ||
			st.RequiredAdapters == nil || len(st.RequiredAdapters) != 0 {
			t.Errorf("built-in %q = %+v, want lifecycle simple, cascade, no adapters, no parent or identity", st.ID, st)
		}
		// Only a container app has a runtime: restarted or reconciled as a whole.
		if wantRuntime := st.ID == "container-app"; (st.Runtime != nil) != wantRuntime ||
			wantRuntime && (st.Runtime.Kind != RuntimeKindSimple || st.Runtime.Members) {
			t.Errorf("built-in %q runtime = %+v, want a simple runtime without members only for container-app", st.ID, st.Runtime)
		}
		if !json.Valid(st.Schema) {
			t.Errorf("built-in %q schema is not JSON", st.ID)
		}
	}
	want := []string{"cluster", "container", "container-app", "database", "postgres-database", "vm"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List() ids: -want +got:\n%s", diff)
	}
}

func TestServiceTypes_Get(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason  string
		id      string
		wantErr error
	}{
		"BuiltIn":   {reason: "Built-in types are registered.", id: "vm"},
		"Unknown":   {reason: "An unknown id is not found.", id: "storage", wantErr: ErrServiceTypeNotFound},
		"Empty":     {reason: "The empty id names no type.", id: "", wantErr: ErrServiceTypeNotFound},
		"WrongCase": {reason: "Ids are matched exactly.", id: "VM", wantErr: ErrServiceTypeNotFound},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newServiceTypes(t)
			got, err := r.Get(t.Context(), tc.id)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("%s\nGet(%q) error = %v, want %v", tc.reason, tc.id, err, tc.wantErr)
			}
			if err == nil && got.ID != tc.id {
				t.Errorf("%s\nGet(%q).ID = %q", tc.reason, tc.id, got.ID)
			}
		})
	}
}

func TestServiceTypes_Get_ReturnsCopy(t *testing.T) {
	t.Parallel()
	r := newServiceTypes(t)
	first, err := r.Get(t.Context(), "vm")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	want := string(first.Schema)
	first.Schema[0] = '['
	first.RequiredAdapters = append(first.RequiredAdapters, "dns")
	again, err := r.Get(t.Context(), "vm")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if string(again.Schema) != want || len(again.RequiredAdapters) != 0 {
		t.Errorf("changing a returned service type changed the registry: %s %v", again.Schema, again.RequiredAdapters)
	}
}

func TestServiceTypes_ValidateSpec_Accepts(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason      string
		serviceType string
		spec        string
	}{
		"VMFromAPIExample": {
			reason:      "API.md's VM example, in snake_case, is valid.",
			serviceType: "vm",
			spec:        `{"service_type":"vm","memory":{"size":"2GB"},"vcpu":{"count":2},"guest_os":{"type":"fedora-39"},"access":{"ssh_public_key":"ssh-ed25519 AAAA..."},"metadata":{"name":"fedora-vm"}}`,
		},
		"VMFull": {
			reason:      "Every VM field, disks with a boot disk, labels and hints.",
			serviceType: "vm",
			spec: `{"service_type":"vm","metadata":{"name":"web-1","labels":{"env":"prod","app.kubernetes.io/name":"web"}},
				"provider_hints":{"kubevirt":{"instance_type":"u1.large"}},
				"vcpu":{"count":4},"memory":{"size":"16GB"},
				"storage":{"disks":[{"name":"boot","capacity":"100GB"},{"name":"data","capacity":"1TB"}]},
				"guest_os":{"type":"rhel-9"},"access":{"ssh_public_key":"ssh-ed25519 AAAA..."}}`,
		},
		"ContainerProcessOnly": {
			reason:      "A container without an image runs a process (the reference process provider).",
			serviceType: "container",
			spec:        `{"service_type":"container","process":{"command":["sleep","3600"]}}`,
		},
		"ContainerFull": {
			reason:      "An image with resources, process override, ports and restart policy.",
			serviceType: "container",
			spec: `{"service_type":"container","metadata":{"name":"web"},
				"image":{"reference":"quay.io/app/webserver:v1.2.3"},
				"resources":{"cpu":{"min":"500m","max":"2"},"memory":{"min":"512MB","max":"2GB"}},
				"process":{"command":["/bin/sh","-c"],"args":["exec httpd"],"env":[{"name":"PORT","value":"8080"},{"name":"DEBUG"}]},
				"network":{"ports":[{"container_port":8080,"visibility":"external"},{"container_port":9090}]},
				"restart_policy":"on_failure","max_restarts":0}`,
		},
		"DatabasePostgres": {
			reason:      "A replicated PostgreSQL database.",
			serviceType: "database",
			spec: `{"service_type":"database","metadata":{"name":"orders-db"},"engine":"postgres","version":"16",
				"resources":{"cpu":{"min":"500m","max":"2"},"memory":{"min":"1GB","max":"4GB"},"storage":"100GB"},
				"replicas":3,"network":{"port":5432,"visibility":"internal"}}`,
		},
		"DatabaseMinimal": {
			reason:      "Engine and version are all a database needs.",
			serviceType: "database",
			spec:        `{"service_type":"database","engine":"mariadb","version":"11.4"}`,
		},
		"Cluster": {
			reason:      "A cluster with three control plane nodes and workers.",
			serviceType: "cluster",
			spec: `{"service_type":"cluster","metadata":{"name":"dev-cluster-01"},"version":"1.30",
				"nodes":{"control_plane":{"count":3,"cpu":4,"memory":"16GB","storage":"120GB"},
				"worker":{"count":0,"cpu":4,"memory":"8GB","storage":"120GB"}}}`,
		},
		"AdditionalPropertiesAtEveryLevel": {
			reason:      "Providers may read fields Steward does not know, at any depth.",
			serviceType: "vm",
			spec: `{"service_type":"vm","gpu":{"count":1},"metadata":{"name":"a","namespace":"x"},
				"vcpu":{"count":2,"sockets":1},"memory":{"size":"2GB","hugepages":true},
				"storage":{"disks":[{"name":"boot","capacity":"10GB","bus":"virtio"}],"class":"fast"},
				"guest_os":{"type":"fedora-39","arch":"arm64"},"access":{"ssh_public_key":"k","user":"core"}}`,
		},
		"IntegralFloat": {
			reason:      "JSON decoders produce float64; 2.0 is an integer.",
			serviceType: "vm",
			spec:        `{"service_type":"vm","vcpu":{"count":2.0},"memory":{"size":"2GB"},"guest_os":{"type":"x"}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newServiceTypes(t)
			if err := r.ValidateSpec(t.Context(), tc.serviceType, spec(t, tc.spec)); err != nil {
				t.Errorf("%s\nValidateSpec(%q) = %v, want nil", tc.reason, tc.serviceType, err)
			}
		})
	}
}

func TestServiceTypes_ValidateSpec_Rejects(t *testing.T) {
	t.Parallel()
	const vm = `"service_type":"vm","vcpu":{"count":2},"memory":{"size":"2GB"},"guest_os":{"type":"fedora-39"}`
	cases := map[string]struct {
		reason      string
		serviceType string
		spec        string
		want        []invalid.Field
	}{
		"WrongType": {
			reason:      "A string where an integer belongs is named by its path.",
			serviceType: "vm",
			spec:        `{"service_type":"vm","vcpu":{"count":"2"},"memory":{"size":"2GB"},"guest_os":{"type":"x"}}`,
			want:        []invalid.Field{{Field: "spec.vcpu.count", Message: "must be an integer, not a string"}},
		},
		"Fraction": {
			reason:      "2.5 vCPUs is not an integer.",
			serviceType: "vm",
			spec:        `{"service_type":"vm","vcpu":{"count":2.5},"memory":{"size":"2GB"},"guest_os":{"type":"x"}}`,
			want:        []invalid.Field{{Field: "spec.vcpu.count", Message: "must be an integer, not a number"}},
		},
		"BelowMinimum": {
			reason:      "A VM needs at least one vCPU.",
			serviceType: "vm",
			spec:        `{"service_type":"vm","vcpu":{"count":0},"memory":{"size":"2GB"},"guest_os":{"type":"x"}}`,
			want:        []invalid.Field{{Field: "spec.vcpu.count", Message: "must be at least 1"}},
		},
		"Pattern": {
			reason:      "Memory needs a unit suffix.",
			serviceType: "vm",
			spec:        `{"service_type":"vm","vcpu":{"count":2},"memory":{"size":"2G"},"guest_os":{"type":"x"}}`,
			want:        []invalid.Field{{Field: "spec.memory.size", Message: "does not have the form this field takes", Detail: "pattern ^[0-9]+(MB|GB|TB)$"}},
		},
		"MissingRequired": {
			reason:      "A missing property is named itself, under its parent.",
			serviceType: "vm",
			spec:        `{"service_type":"vm","vcpu":{},"memory":{"size":"2GB"}}`,
			want: []invalid.Field{
				{Field: "spec.guest_os", Message: "is required"},
				{Field: "spec.vcpu.count", Message: "is required"},
			},
		},
		"Empty": {
			reason:      "An empty spec lacks every required property.",
			serviceType: "database",
			spec:        `{}`,
			want: []invalid.Field{
				{Field: "spec.engine", Message: "is required"},
				{Field: "spec.service_type", Message: "is required"},
				{Field: "spec.version", Message: "is required"},
			},
		},
		"Enum": {
			reason:      "Visibility is one of three words.",
			serviceType: "container",
			spec:        `{"service_type":"container","image":{"reference":"nginx"},"network":{"ports":[{"container_port":80,"visibility":"public"}]}}`,
			want:        []invalid.Field{{Field: "spec.network.ports[0].visibility", Message: `must be one of "none", "internal", "external"`}},
		},
		"NumericEnum": {
			reason:      "A control plane has 1, 3 or 5 nodes.",
			serviceType: "cluster",
			spec:        `{"service_type":"cluster","version":"1.30","nodes":{"control_plane":{"count":2}}}`,
			want:        []invalid.Field{{Field: "spec.nodes.control_plane.count", Message: "must be one of 1, 3, 5"}},
		},
		"BadName": {
			reason:      "metadata.name is a DNS label.",
			serviceType: "vm",
			spec:        `{` + vm + `,"metadata":{"name":"Fedora_VM"}}`,
			want:        []invalid.Field{{Field: "spec.metadata.name", Message: "does not have the form this field takes: Resource name, a DNS label.", Detail: "pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}},
		},
		"LongName": {
			reason:      "A DNS label has at most 63 characters.",
			serviceType: "vm",
			spec:        `{` + vm + `,"metadata":{"name":"a234567890123456789012345678901234567890123456789012345678901234"}}`,
			want:        []invalid.Field{{Field: "spec.metadata.name", Message: "must be at most 63 characters long"}},
		},
		"MetadataWithoutName": {
			reason:      "Metadata, when given, names the resource.",
			serviceType: "vm",
			spec:        `{` + vm + `,"metadata":{"labels":{"env":"dev"}}}`,
			want:        []invalid.Field{{Field: "spec.metadata.name", Message: "is required"}},
		},
		"LabelValue": {
			reason:      "Label values are strings; an odd key is quoted in the path.",
			serviceType: "vm",
			spec:        `{` + vm + `,"metadata":{"name":"a","labels":{"app.kubernetes.io/tier":1}}}`,
			want:        []invalid.Field{{Field: `spec.metadata.labels["app.kubernetes.io/tier"]`, Message: "must be a string, not a number"}},
		},
		"ServiceTypeMismatch": {
			reason:      "A spec written for another type fails that type's const.",
			serviceType: "vm",
			spec:        `{"service_type":"container","vcpu":{"count":2},"memory":{"size":"2GB"},"guest_os":{"type":"x"}}`,
			want:        []invalid.Field{{Field: "spec.service_type", Message: `must be "vm"`}},
		},
		"ServiceTypeMissing": {
			reason:      "spec.service_type is required even when the caller names the type.",
			serviceType: "vm",
			spec:        `{"vcpu":{"count":2},"memory":{"size":"2GB"},"guest_os":{"type":"x"}}`,
			want:        []invalid.Field{{Field: "spec.service_type", Message: "is required"}},
		},
		"NoBootDisk": {
			reason:      "The disks must include one named boot.",
			serviceType: "vm",
			spec:        `{` + vm + `,"storage":{"disks":[{"name":"data","capacity":"10GB"}]}}`,
			want:        []invalid.Field{{Field: "spec.storage.disks", Message: `must include a disk named "boot"`}},
		},
		"DuplicateDiskName": {
			reason:      "Disk names are unique; the later duplicate is named.",
			serviceType: "vm",
			spec:        `{` + vm + `,"storage":{"disks":[{"name":"boot","capacity":"10GB"},{"name":"data","capacity":"1GB"},{"name":"data","capacity":"2GB"}]}}`,
			want:        []invalid.Field{{Field: "spec.storage.disks[2].name", Message: "must be unique, but item 1 has the same name"}},
		},
		"DiskFields": {
			reason:      "Array items are indexed in the path.",
			serviceType: "vm",
			spec:        `{` + vm + `,"storage":{"disks":[{"name":"boot","capacity":"lots"},{"name":"data"}]}}`,
			want: []invalid.Field{
				{Field: "spec.storage.disks[0].capacity", Message: "does not have the form this field takes", Detail: "pattern ^[0-9]+(MB|GB|TB)$"},
				{Field: "spec.storage.disks[1].capacity", Message: "is required"},
			},
		},
		"ContainerWithoutImageOrProcess": {
			reason:      "A container needs an image or a process; the alternatives are reported together at the root.",
			serviceType: "container",
			spec:        `{"service_type":"container","restart_policy":"always"}`,
			want:        []invalid.Field{{Field: "spec", Message: "must include image or process"}},
		},
		"ContainerFields": {
			reason:      "Every failure in a container is reported, sorted by field.",
			serviceType: "container",
			spec: `{"service_type":"container","process":{"command":[],"env":[{"value":"x"},{"name":"A=B"}]},
				"resources":{"cpu":{"min":"0.5"},"memory":{"max":"2Gi"}},
				"network":{"ports":[{"container_port":80},{"container_port":80},{"container_port":70000}]},
				"restart_policy":"sometimes","max_restarts":-1}`,
			want: []invalid.Field{
				{Field: "spec.max_restarts", Message: "must be at least 0"},
				{Field: "spec.network.ports[1].container_port", Message: "must be unique, but item 0 has the same container_port"},
				{Field: "spec.network.ports[2].container_port", Message: "must be at most 65535"},
				{Field: "spec.process.command", Message: "must have at least 1 item"},
				{Field: "spec.process.env[0].name", Message: "is required"},
				{Field: "spec.process.env[1].name", Message: "does not have the form this field takes", Detail: "pattern ^[^=]+$"},
				{Field: "spec.resources.cpu.min", Message: "does not have the form this field takes", Detail: "pattern ^[1-9][0-9]*m?$"},
				{Field: "spec.resources.memory.max", Message: "does not have the form this field takes", Detail: "pattern ^[0-9]+(MB|GB|TB)$"},
				{Field: "spec.restart_policy", Message: `must be one of "always", "on_failure", "never"`},
			},
		},
		"DatabaseFields": {
			reason:      "Engine is a lowercase word; replicas start at 1.",
			serviceType: "database",
			spec:        `{"service_type":"database","engine":"PostgreSQL","version":16,"replicas":0,"network":{"visibility":"none"}}`,
			want: []invalid.Field{
				{Field: "spec.engine", Message: "does not have the form this field takes: Database engine, lowercase. The provider serving the instance decides which engines it runs.", Detail: "pattern ^[a-z][a-z0-9-]*$"},
				{Field: "spec.network.visibility", Message: `must be one of "internal", "external"`},
				{Field: "spec.replicas", Message: "must be at least 1"},
				{Field: "spec.version", Message: "must be a string, not a number"},
			},
		},
		"ClusterFields": {
			reason:      "A cluster needs nodes; worker counts are not negative.",
			serviceType: "cluster",
			spec:        `{"service_type":"cluster","version":"1.30","nodes":{"worker":{"count":-1,"cpu":0}}}`,
			want: []invalid.Field{
				{Field: "spec.nodes.worker.count", Message: "must be at least 0"},
				{Field: "spec.nodes.worker.cpu", Message: "must be at least 1"},
			},
		},
		"ObjectExpected": {
			reason:      "A scalar where an object belongs stops there.",
			serviceType: "cluster",
			spec:        `{"service_type":"cluster","version":"1.30","nodes":3,"provider_hints":{"openshift":"4.15"}}`,
			want: []invalid.Field{
				{Field: "spec.nodes", Message: "must be an object, not a number"},
				{Field: "spec.provider_hints.openshift", Message: "must be an object, not a string"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newServiceTypes(t)
			err := r.ValidateSpec(t.Context(), tc.serviceType, spec(t, tc.spec))
			var got *invalid.Error
			if !errors.As(err, &got) {
				t.Fatalf("%s\nValidateSpec(%q) = %v, want an *invalid.Error", tc.reason, tc.serviceType, err)
			}
			if diff := cmp.Diff(tc.want, got.Fields); diff != "" {
				t.Errorf("%s\nValidateSpec(%q) fields: -want +got:\n%s", tc.reason, tc.serviceType, diff)
			}
		})
	}
}

func TestServiceTypes_ValidateSpec_ServiceType(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason      string
		serviceType string
		wantErr     error
		wantFields  []invalid.Field
	}{
		"Unknown": {
			reason:      "An unknown type is not found, not invalid.",
			serviceType: "storage",
			wantErr:     ErrServiceTypeNotFound,
		},
		"Empty": {
			reason:      "No type at all is a missing spec.service_type.",
			serviceType: "",
			wantFields:  []invalid.Field{{Field: "spec.service_type", Message: "is required"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newServiceTypes(t)
			err := r.ValidateSpec(t.Context(), tc.serviceType, map[string]any{"service_type": tc.serviceType})
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("%s\nValidateSpec(%q) = %v, want %v", tc.reason, tc.serviceType, err, tc.wantErr)
			}
			var inv *invalid.Error
			if isInvalid := errors.As(err, &inv); isInvalid != (tc.wantFields != nil) {
				t.Fatalf("%s\nValidateSpec(%q) = %v; invalid.Error: %v, want %v", tc.reason, tc.serviceType, err, isInvalid, tc.wantFields != nil)
			}
			if inv != nil {
				if diff := cmp.Diff(tc.wantFields, inv.Fields); diff != "" {
					t.Errorf("%s\nfields: -want +got:\n%s", tc.reason, diff)
				}
			}
		})
	}
}

func TestServiceTypes_ValidateSpec_GoValues(t *testing.T) {
	t.Parallel()
	r := newServiceTypes(t)
	// A spec built in Go, not decoded from JSON: ints and a map[string]string.
	ok := map[string]any{
		"service_type": "vm",
		"metadata":     map[string]any{"name": "a", "labels": map[string]string{"env": "dev"}},
		"vcpu":         map[string]any{"count": 2},
		"memory":       map[string]any{"size": "2GB"},
		"guest_os":     map[string]any{"type": "x"},
	}
	if err := r.ValidateSpec(t.Context(), "vm", ok); err != nil {
		t.Errorf("ValidateSpec(Go values) = %v, want nil", err)
	}
	bad := map[string]any{"service_type": "vm", "vcpu": map[string]int{"count": 0}, "memory": map[string]any{"size": "2GB"}, "guest_os": map[string]any{"type": "x"}}
	var inv *invalid.Error
	if err := r.ValidateSpec(t.Context(), "vm", bad); !errors.As(err, &inv) || len(inv.Fields) != 1 || inv.Fields[0].Field != "spec.vcpu.count" {
		t.Errorf("ValidateSpec(vcpu.count 0 as map[string]int) = %v, want spec.vcpu.count", err)
	}
}

func TestServiceTypes_ValidateSpec_NilSpec(t *testing.T) {
	t.Parallel()
	r := newServiceTypes(t)
	err := r.ValidateSpec(t.Context(), "cluster", nil)
	var inv *invalid.Error
	if !errors.As(err, &inv) {
		t.Fatalf("ValidateSpec(nil) = %v, want an *invalid.Error", err)
	}
	want := []invalid.Field{
		{Field: "spec.nodes", Message: "is required"},
		{Field: "spec.service_type", Message: "is required"},
		{Field: "spec.version", Message: "is required"},
	}
	if diff := cmp.Diff(want, inv.Fields); diff != "" {
		t.Errorf("a nil spec is an empty one: -want +got:\n%s", diff)
	}
}

func TestServiceTypes_ValidateSpec_DoesNotChangeSpec(t *testing.T) {
	t.Parallel()
	r := newServiceTypes(t)
	const s = `{"service_type":"database","engine":"postgres","version":"16"}`
	got := spec(t, s)
	if err := r.ValidateSpec(t.Context(), "database", got); err != nil {
		t.Fatalf("ValidateSpec: %v", err)
	}
	if diff := cmp.Diff(spec(t, s), got); diff != "" {
		t.Errorf("ValidateSpec changed the spec (defaults are the order flow's): -want +got:\n%s", diff)
	}
}

func TestServiceTypes_Concurrent(t *testing.T) {
	t.Parallel()
	r := newServiceTypes(t)
	const goroutines, rounds = 16, 50
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		// Each goroutine has its own specs, decoded here: t.Fatal must not
		// run on another goroutine.
		valid := spec(t, fmt.Sprintf(`{"service_type":"vm","metadata":{"name":"vm-%d"},"vcpu":{"count":%d},"memory":{"size":"2GB"},"guest_os":{"type":"x"}}`, g, g+1))
		invalidSpec := spec(t, `{"service_type":"container","network":{"ports":[{"container_port":0}]}}`)
		wg.Go(func() {
			for range rounds {
				if err := r.ValidateSpec(t.Context(), "vm", valid); err != nil {
					errs <- fmt.Errorf("goroutine %d: valid spec: %w", g, err)
					return
				}
				var inv *invalid.Error
				if err := r.ValidateSpec(t.Context(), "container", invalidSpec); !errors.As(err, &inv) || len(inv.Fields) != 2 {
					errs <- fmt.Errorf("goroutine %d: invalid spec: %v", g, err)
					return
				}
				if _, err := r.Get(t.Context(), "database"); err != nil {
					errs <- fmt.Errorf("goroutine %d: Get: %w", g, err)
					return
				}
				if list, err := r.List(t.Context(), "", 50); err != nil || len(list) != len(builtinIDs) {
					n := len(list)
					errs <- fmt.Errorf("goroutine %d: List has %d types", g, n)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkServiceTypes_ValidateSpec(b *testing.B) {
	r := newServiceTypes(b)
	valid := spec(b, `{"service_type":"vm","metadata":{"name":"fedora-vm","labels":{"env":"dev"}},"vcpu":{"count":2},"memory":{"size":"2GB"},
		"storage":{"disks":[{"name":"boot","capacity":"20GB"},{"name":"data","capacity":"100GB"}]},"guest_os":{"type":"fedora-39"}}`)
	invalidSpec := spec(b, `{"service_type":"vm","vcpu":{"count":0},"memory":{"size":"2G"}}`)
	b.Run("Valid", func(b *testing.B) {
		for b.Loop() {
			if err := r.ValidateSpec(b.Context(), "vm", valid); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Invalid", func(b *testing.B) {
		for b.Loop() {
			if err := r.ValidateSpec(b.Context(), "vm", invalidSpec); err == nil {
				b.Fatal("want an error")
			}
		}
	})
}
