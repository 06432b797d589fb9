package catalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/schema"
)

// Issue 26: the built-in container-app type takes the spec, refuses
// what a Kubernetes provider could not run, and lets an order change its
// image, replicas, command, args, env and resources in place (rw+).
func TestBuiltin_ContainerAppSchema(t *testing.T) {
	t.Parallel()
	builtins, err := builtinServiceTypes()
	if err != nil {
		t.Fatal(err)
	}
	var s *schema.Schema
	for _, st := range builtins {
		if st.ID == "container-app" {
			if s, err = schema.Compile(st.Schema); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s == nil {
		t.Fatal("no built-in container-app")
	}
	good := map[string]any{"service_type": "container-app", "image": "nginx:1.27", "replicas": 2,
		"env":       []any{map[string]any{"name": "MODE", "value": "prod"}},
		"ports":     []any{map[string]any{"container_port": 8080, "service_port": 80}},
		"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}, "limits": map[string]any{"cpu": "0.5"}},
		"expose":    "cluster"}
	if err := s.Validate("spec", good); err != nil {
		t.Errorf("a good spec: %v", err)
	}
	bad := map[string]any{"service_type": "container-app", "replicas": 51,
		"env":       []any{map[string]any{"name": "1X"}},
		"ports":     []any{map[string]any{"container_port": 0, "protocol": "HTTP"}},
		"resources": map[string]any{"limits": map[string]any{"memory": "lots"}},
		"expose":    "world"}
	err = s.Validate("spec", bad)
	var fields *invalid.Error
	if !errors.As(err, &fields) {
		t.Fatalf("a bad spec: %v, want field errors", err)
	}
	named := ""
	for _, f := range fields.Fields {
		named += f.Field + " "
	}
	for _, want := range []string{"spec.image", "spec.replicas", "spec.env[0].name", "spec.ports[0].container_port",
		"spec.ports[0].protocol", "spec.resources.limits.memory", "spec.expose"} {
		if !strings.Contains(named, want+" ") {
			t.Errorf("the bad spec's errors do not name %s: %s", want, named)
		}
	}
	// Image references: lowercase but for the tag, no spaces, a registry
	// with a port, a digest.
	for image, ok := range map[string]bool{
		"nginx:1.27": true, "registry.example.com:5000/team/web-app:v1.2_RC": true, "ghcr.io/a/b__c.d": true,
		"busybox@sha256:" + strings.Repeat("a1", 32): true,
		"nginx 1.27": false, "Nginx:1.27": false, "registry.example.com/Team/app": false, "nginx:": false, " nginx": false,
		"nginx:1.27 ": false, "-nginx": false,
	} {
		spec := map[string]any{"service_type": "container-app", "image": image}
		if err := s.Validate("spec", spec); (err == nil) != ok {
			t.Errorf("image %q: validate = %v, want ok %v", image, err, ok)
		}
	}
	for path, want := range map[string]string{"image": "rw+", "replicas": "rw+", "command": "rw+", "args": "rw+",
		"env": "rw+", "resources.limits.cpu": "rw+", "ports": "rw", "expose": "rw"} {
		p, err := schema.ParsePath(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Modifier(p); got != want {
			t.Errorf("modifier of %s = %q, want %q", path, got, want)
		}
	}
}
