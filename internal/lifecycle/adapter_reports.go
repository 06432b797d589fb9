package lifecycle

import (
	"context"
	"errors"
	"time"

	"github.com/stewardhq/steward/internal/adapterstatus"
	"github.com/stewardhq/steward/internal/store"
)

// OrderForReportTx reads, locked, what an adapter's report on an order is
// checked against (adapterstatus.Orders): only the columns it needs, since
// reports arrive by the thousand. A deleting order takes reports too: they
// are what its deletion waits for.
func (s *Service) OrderForReportTx(ctx context.Context, tx *store.Tx, project, id string) (adapterstatus.Order, error) {
	return reportedOrder(tx.QueryRow(ctx, s.q.Get("OrderReportLock"), id), project)
}

// OrderForReport is OrderForReportTx outside a transaction.
func (s *Service) OrderForReport(ctx context.Context, project, id string) (adapterstatus.Order, error) {
	return reportedOrder(s.cfg.DB.QueryRow(ctx, s.q.Get("OrderReportGet"), id), project)
}

// ResolveOrder turns an order's id or identity into its id
// (adapterstatus.Orders), as every order route takes either.
func (s *Service) ResolveOrder(ctx context.Context, project, ref string) (string, error) {
	return s.resolve(ctx, project, ref)
}

func reportedOrder(row store.Scanner, project string) (adapterstatus.Order, error) {
	var owner string
	var generation int64
	var deletedAt *time.Time
	var terminal bool
	err := row.Scan(&owner, &generation, &deletedAt, &terminal)
	if errors.Is(err, store.ErrNotFound) || (err == nil && owner != project) {
		return adapterstatus.Order{}, ErrOrderNotFound // another project's order is not there (404, not 403)
	}
	if err != nil {
		return adapterstatus.Order{}, err
	}
	return adapterstatus.Order{Generation: generation, Deleting: deletedAt != nil && !terminal}, nil
}
