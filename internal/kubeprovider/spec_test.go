package kubeprovider_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/kubeprovider"
)

func TestAppSpec_ValidateNamesEveryFault(t *testing.T) {
	t.Parallel()
	many := int32(51)
	bad := kubeprovider.AppSpec{
		Replicas: &many,
		Env:      []kubeprovider.EnvVar{{Name: "1X"}, {Name: "OK"}, {Name: "OK"}},
		Ports:    []kubeprovider.Port{{ContainerPort: 0, ServicePort: 70000, Protocol: "HTTP"}},
		Expose:   "world",
		Resources: &kubeprovider.Resources{Requests: kubeprovider.Quantities{CPU: "lots"},
			Limits: kubeprovider.Quantities{Memory: "512Mi"}},
	}
	err := bad.Validate()
	var errs *invalid.Error
	if !errors.As(err, &errs) {
		t.Fatalf("Validate = %v, want an *invalid.Error", err)
	}
	var fields []string
	for _, f := range errs.Fields {
		fields = append(fields, f.Field)
	}
	for _, want := range []string{"image", "replicas", "env[0].name", "env[2].name", "ports[0].container_port",
		"ports[0].service_port", "ports[0].protocol", "expose", "resources.requests.cpu"} {
		if !slices.Contains(fields, want) {
			t.Errorf("Validate does not name %s: %v", want, fields)
		}
	}
	if slices.Contains(fields, "resources.limits.memory") || slices.Contains(fields, "env[1].name") {
		t.Errorf("Validate names a good field: %v", fields)
	}
	for _, image := range []string{"Nginx:1.27", "nginx 1.27", "nginx:"} {
		if err := (kubeprovider.AppSpec{Image: image}).Validate(); err == nil {
			t.Errorf("image %q is accepted", image)
		}
	}
	good := kubeprovider.AppSpec{Image: "nginx:1.27", Ports: []kubeprovider.Port{{ContainerPort: 8080, ServicePort: 80}}, Expose: "cluster"}
	if err := good.Validate(); err != nil {
		t.Errorf("a good spec: %v", err)
	}
}
