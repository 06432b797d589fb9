package lifecycle

import (
	"context"
	"github.com/stewardhq/steward/pkg/provider"
	"time"

	"github.com/stewardhq/steward/internal/status"
)

// RuntimeHealth is an app instance's runtime as last reported: its health
// (healthy, degraded or failed), a message saying which members are not
// healthy, and when it was observed.
type RuntimeHealth struct {
	Health       string
	Message      string
	ObservedTime time.Time
}

// Runtimes reads the runtimes providers and repair workers report (the
// repair domain).
type InstanceOutputs interface {
	// InstanceOutputs returns the outputs and the last comparison with
	// the spec (Outputs, Synced) of those of the instances that have any,
	// by instance id (sprm.Service.InstanceOutputs).
	InstanceOutputs(ctx context.Context, ids []string) (map[string]provider.Instance, error)
}

// Runtimes are the app instances' runtimes as last reported.
type Runtimes interface {
	// RuntimeHealth returns the runtime last reported for the order; ok is
	// false when none was.
	RuntimeHealth(ctx context.Context, orderID string) (h RuntimeHealth, ok bool, err error)
}

// runtime reads o's runtime as last reported, for its Healthy condition
// ([status.Healthy]), when the order is shown (like adapter reports). It
// reads nothing for an order that is gone or whose service type has no
// runtime (hasRuntime caches that by type), and then says none was
// reported.
func (s *Service) runtime(ctx context.Context, o Order, hasRuntime map[string]bool) status.Runtime {
	if s.cfg.Runtimes == nil || o.Terminal {
		return status.Runtime{}
	}
	has, seen := hasRuntime[o.ServiceType]
	if !seen {
		runtime, err := s.cfg.Catalog.HasRuntime(ctx, o.ServiceType)
		has = err == nil && runtime
		hasRuntime[o.ServiceType] = has
	}
	if !has {
		return status.Runtime{}
	}
	h, ok, err := s.cfg.Runtimes.RuntimeHealth(ctx, o.ID)
	return status.Runtime{Reported: ok, Health: h.Health, Message: h.Message, ObservedTime: h.ObservedTime, ReadErr: err}
}
