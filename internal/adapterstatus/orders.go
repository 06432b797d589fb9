package adapterstatus

import (
	"errors"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

// ResolveOrdersWith registers what turns an order's identity into its id
// on the routes; until then, a route's reference is taken as the id. Call
// it once, before the service serves.
func (s *Service) ResolveOrdersWith(r OrderResolver) { s.resolver = r }

// reportedOrder scans what a report is checked against: only the columns it
// needs of the order, read by this package's own query (reports arrive by
// the thousand, and the order's owner is above this package). A deleting
// order takes reports too: they are what its deletion waits for.
func reportedOrder(row store.Scanner, project string) (order, error) {
	var owner string
	var generation int64
	var deletedAt *time.Time
	var terminal bool
	err := row.Scan(&owner, &generation, &deletedAt, &terminal)
	if errors.Is(err, store.ErrNotFound) || (err == nil && owner != project) {
		return order{}, ErrOrderNotFound // another project's order is not there (404, not 403)
	}
	if err != nil {
		return order{}, err
	}
	return order{Generation: generation, Deleting: deletedAt != nil && !terminal}, nil
}
