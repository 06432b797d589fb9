package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/repair"
)

// AppInstance finds the order a repair names, by id or identity: an app
// instance is an order whose service type declares a runtime (repair
// seed). Another project's order, a missing one and one whose type has no
// runtime are repair.ErrAppInstanceNotFound (repair.AppInstances, registered
// on the repair domain after construction).
func (s *Service) AppInstance(ctx context.Context, project, ref string) (repair.AppInstance, error) {
	o, err := s.Order(ctx, project, ref)
	if errors.Is(err, ErrOrderNotFound) {
		return repair.AppInstance{}, fmt.Errorf("%w: %s", repair.ErrAppInstanceNotFound, ref)
	}
	if err != nil {
		return repair.AppInstance{}, err
	}
	st, err := s.cfg.Catalog.ServiceType(ctx, o.ServiceType)
	if err != nil {
		return repair.AppInstance{}, err
	}
	if st.Runtime == nil {
		return repair.AppInstance{}, fmt.Errorf("%w: order %s is of service type %s, which declares no runtime",
			repair.ErrAppInstanceNotFound, o.ID, o.ServiceType)
	}
	return repair.AppInstance{
		ID: o.ID, Project: o.Project, ServiceType: o.ServiceType, RuntimeKind: st.Runtime.Kind,
		InstanceID: o.InstanceID, ProviderName: o.ProviderName, State: o.State, Deleting: o.DeletedAt != nil,
	}, nil
}
