package lifecycle

import (
	"context"

	"github.com/stewardhq/steward/internal/adapterstatus"
	"github.com/stewardhq/steward/internal/store"
)

// OrderForReportTx reads, locked, the order an adapter reports on
// (adapterstatus.Orders). A deleting order takes reports too: they are what
// its deletion waits for.
func (s *Service) OrderForReportTx(ctx context.Context, tx *store.Tx, project, id string) (adapterstatus.Order, error) {
	o, err := s.lockOrderTx(ctx, tx, id)
	return reportedOrder(o, project, err)
}

// OrderForReport is OrderForReportTx outside a transaction.
func (s *Service) OrderForReport(ctx context.Context, project, id string) (adapterstatus.Order, error) {
	o, err := s.orderByID(ctx, id)
	return reportedOrder(o, project, err)
}

func reportedOrder(o Order, project string, err error) (adapterstatus.Order, error) {
	if err != nil {
		return adapterstatus.Order{}, err
	}
	if o.Project != project {
		return adapterstatus.Order{}, ErrOrderNotFound // another project's order is not there (404, not 403)
	}
	return adapterstatus.Order{Generation: o.Generation}, nil
}
