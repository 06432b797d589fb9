// Package kubeprovider runs a user's container image as an application on a
// Kubernetes cluster: the container-app service type's provider (issue 26).
//
// This first part turns an order's spec into the objects that realise it
// (Manifests) and writes them with server-side apply under one field
// manager (Applier), so that a replayed create changes nothing.
package kubeprovider

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stewardhq/steward/internal/invalid"
)

// AppSpec is a container-app order's spec.
type AppSpec struct {
	Image string `json:"image"`
	// Replicas defaults to 1; 0 to 50.
	Replicas  *int32     `json:"replicas,omitempty"`
	Command   []string   `json:"command,omitempty"`
	Args      []string   `json:"args,omitempty"`
	Env       []EnvVar   `json:"env,omitempty"`
	Ports     []Port     `json:"ports,omitempty"`
	Resources *Resources `json:"resources,omitempty"`
	// Expose is "none" (the default) or "cluster": a ClusterIP Service for
	// the ports that name a service port.
	Expose string `json:"expose,omitempty"`
}

// EnvVar is one variable of the container's environment.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Port is a port the container listens on and, with ServicePort, the
// Service's port for it.
type Port struct {
	ContainerPort int32  `json:"container_port"`
	ServicePort   int32  `json:"service_port,omitempty"`
	Protocol      string `json:"protocol,omitempty"` // TCP (default), UDP, SCTP
}

// Resources are the container's requests and limits; they also make the
// namespace's ResourceQuota and LimitRange.
type Resources struct {
	Requests Quantities `json:"requests"`
	Limits   Quantities `json:"limits"`
}

// Quantities are Kubernetes quantities ("250m", "512Mi").
type Quantities struct {
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// MaxReplicas bounds AppSpec.Replicas.
const MaxReplicas = 50

// imageReference is a container image reference as the registries take
// it: a lowercase repository (a registry host and port first, maybe), an
// optional tag and an optional sha256 digest (the catalog's schema says
// the same).
var imageReference = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`)

// envName is what a shell and Kubernetes both take as a variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate reports every fault of the spec, each named by its path.
func (s AppSpec) Validate() error {
	var errs invalid.Errors
	switch {
	case s.Image == "":
		errs.Add("image", "is required")
	case len(s.Image) > 512 || !imageReference.MatchString(s.Image):
		errs.Add("image", "%q is not an image reference (lowercase repository, optional :tag and @sha256:digest, no spaces)", s.Image)
	}
	if s.Replicas != nil && (*s.Replicas < 0 || *s.Replicas > MaxReplicas) {
		errs.Add("replicas", "must be between 0 and %d", MaxReplicas)
	}
	seen := map[string]bool{}
	for i, e := range s.Env {
		switch {
		case !envName.MatchString(e.Name):
			errs.Add(fmt.Sprintf("env[%d].name", i), "must be a letter or _ followed by letters, digits or _")
		case seen[e.Name]:
			errs.Add(fmt.Sprintf("env[%d].name", i), "%s is set twice", e.Name)
		}
		seen[e.Name] = true
	}
	for i, p := range s.Ports {
		if p.ContainerPort < 1 || p.ContainerPort > 65535 {
			errs.Add(fmt.Sprintf("ports[%d].container_port", i), "must be between 1 and 65535")
		}
		if p.ServicePort < 0 || p.ServicePort > 65535 {
			errs.Add(fmt.Sprintf("ports[%d].service_port", i), "must be between 1 and 65535")
		}
		switch p.Protocol {
		case "", "TCP", "UDP", "SCTP":
		default:
			errs.Add(fmt.Sprintf("ports[%d].protocol", i), "must be TCP, UDP or SCTP")
		}
	}
	switch s.Expose {
	case "", "none", "cluster":
	default:
		errs.Add("expose", "must be none or cluster")
	}
	if r := s.Resources; r != nil {
		for path, q := range map[string]string{"resources.requests.cpu": r.Requests.CPU, "resources.requests.memory": r.Requests.Memory,
			"resources.limits.cpu": r.Limits.CPU, "resources.limits.memory": r.Limits.Memory} {
			if _, err := parseQuantity(q); err != nil {
				errs.Add(path, "is not a Kubernetes quantity (250m, 512Mi): %v", err)
			}
		}
	}
	return errs.Err()
}

// parseQuantity parses q, "" being none.
func parseQuantity(q string) (*resource.Quantity, error) {
	if q == "" {
		return nil, nil
	}
	v, err := resource.ParseQuantity(q)
	if err != nil {
		return nil, err
	}
	return &v, nil
}
