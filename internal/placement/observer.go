package placement

import (
	"context"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// ResourceStatus is what became of an order's resource: its instance's
// status changed, or an update of it was refused (Status FAILED).
type ResourceStatus struct {
	OrderID    string
	InstanceID string
	Status     provider.Status
	Message    string
	// RestartCount is the report's restart count, nil when it had none.
	RestartCount *int64
	// Via says how the provider told the status (sprm.InstanceStatus.Via);
	// empty for a status Steward decided.
	Via string
	// Updated marks the report that an in-place update was accepted: the
	// status is the one the instance has since.
	Updated bool
}

// Repoint is the end of a replacement as the order sees it (rehydration,
// or an update realised by replacement): the order whose current resource
// is OldInstanceID now has NewInstanceID, or, when it failed, keeps
// OldInstanceID and Message says why.
type Repoint struct {
	OrderID       string
	OldInstanceID string
	NewInstanceID string
	ProviderName  string
	// Spec is the new resource's validated request.
	Spec map[string]any
	// Status is the new resource's status now.
	Status  provider.Status
	Message string
}

// OrderObserver is how placement reports what happens to orders'
// resources, each in the transaction that records it (the lifecycle
// implements it: the one observer of resource status, DESIGN §2).
type OrderObserver interface {
	// ResourceStatusTx reports a resource's new status.
	ResourceStatusTx(ctx context.Context, tx *store.Tx, st ResourceStatus) error
	// ResourceReplacedTx moves the order to its new resource. It returns
	// [ErrOrderGone] when the order no longer points at OldInstanceID or
	// was deleted; placement then deletes the new resource.
	ResourceReplacedTx(ctx context.Context, tx *store.Tx, r Repoint) error
	// ResourceReplacingTx reports that an update planned in place will be
	// realised by replacement after all (the provider stopped updating in
	// place): NewInstanceID will replace the order's current resource.
	ResourceReplacingTx(ctx context.Context, tx *store.Tx, orderID, newInstanceID string) error
	// ReplacementFailedTx reports that the new resource of a replacement
	// could not be created; the order keeps OldInstanceID.
	ReplacementFailedTx(ctx context.Context, tx *store.Tx, r Repoint) error
}

// OrderObserverFuncs adapts functions to [OrderObserver]; a nil function
// ignores the report.
type OrderObserverFuncs struct {
	StatusFunc            func(ctx context.Context, tx *store.Tx, st ResourceStatus) error
	ReplacedFunc          func(ctx context.Context, tx *store.Tx, r Repoint) error
	ReplacingFunc         func(ctx context.Context, tx *store.Tx, orderID, newInstanceID string) error
	ReplacementFailedFunc func(ctx context.Context, tx *store.Tx, r Repoint) error
}

// ResourceReplacingTx calls ReplacingFunc.
func (f OrderObserverFuncs) ResourceReplacingTx(ctx context.Context, tx *store.Tx, orderID, newInstanceID string) error {
	if f.ReplacingFunc == nil {
		return nil
	}
	return f.ReplacingFunc(ctx, tx, orderID, newInstanceID)
}

// ResourceStatusTx calls StatusFunc.
func (f OrderObserverFuncs) ResourceStatusTx(ctx context.Context, tx *store.Tx, st ResourceStatus) error {
	if f.StatusFunc == nil {
		return nil
	}
	return f.StatusFunc(ctx, tx, st)
}

// ResourceReplacedTx calls ReplacedFunc.
func (f OrderObserverFuncs) ResourceReplacedTx(ctx context.Context, tx *store.Tx, r Repoint) error {
	if f.ReplacedFunc == nil {
		return nil
	}
	return f.ReplacedFunc(ctx, tx, r)
}

// ReplacementFailedTx calls ReplacementFailedFunc.
func (f OrderObserverFuncs) ReplacementFailedTx(ctx context.Context, tx *store.Tx, r Repoint) error {
	if f.ReplacementFailedFunc == nil {
		return nil
	}
	return f.ReplacementFailedFunc(ctx, tx, r)
}
