package lifecycle

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/order"
)

var (
	// ErrOrderNotFound is returned when no order (catalog item instance)
	// has the id or identity in the caller's project, or it was deleted and
	// deleted orders were not asked for. It is the order reads' own, so the
	// domains below answer the same 404.
	ErrOrderNotFound = order.ErrNotFound
	// ErrOrderExists is returned by [Service.CreateOrder] when the id (or
	// the identity attribute's value) is taken; the error is an
	// [*OrderExistsError].
	ErrOrderExists = errors.New("an order with this id already exists")
	// ErrInvalidState is returned when the order's state has no transfer
	// for the request (a PATCH where the state has no on_update).
	ErrInvalidState = errors.New("the order's state does not allow this")
	// ErrOrderDeleting is returned for a change of an order being deleted.
	ErrOrderDeleting = errors.New("the order is being deleted")
	// ErrVersionMismatch is returned by [Service.SetState] when the
	// caller's current_version is not the order's, as a
	// [*VersionMismatchError].
	ErrVersionMismatch = errors.New("the order's version is not the one given")
	// ErrNoTransfer is returned by [Service.SetState] when no api transfer
	// joins the order's state and the target.
	ErrNoTransfer = errors.New("no transfer joins the states")
	// ErrTransferNotApplicable is returned when a transfer's operation
	// cannot apply to the order's attribute sets.
	ErrTransferNotApplicable = errors.New("the transfer's operation cannot apply")
	// ErrAttributeNotUpdatable is returned, as an
	// [*AttributeNotUpdatableError], when a request writes attributes their
	// x-modifier does not let it write.
	ErrAttributeNotUpdatable = errors.New("attribute not updatable")
)

// OrderExistsError is [ErrOrderExists] with what is taken.
type OrderExistsError struct {
	ID       string
	Identity *string
	// ExpireTime is set when the order with the id is a tombstone: the id
	// is free again once it is purged.
	ExpireTime *time.Time
}

func (e *OrderExistsError) Error() string {
	if e.ExpireTime != nil {
		return fmt.Sprintf("order %q was deleted and is kept as a tombstone until %s; the id is free after that",
			e.ID, e.ExpireTime.UTC().Format(time.RFC3339))
	}
	if e.Identity != nil {
		return fmt.Sprintf("order %q: an order with this id or identity %q already exists", e.ID, *e.Identity)
	}
	return fmt.Sprintf("order %q: %v", e.ID, ErrOrderExists)
}

// Unwrap makes errors.Is(err, ErrOrderExists) true.
func (e *OrderExistsError) Unwrap() error { return ErrOrderExists }

// ProblemFields gives a tombstone's expire_time.
func (e *OrderExistsError) ProblemFields() map[string]any {
	if e.ExpireTime == nil {
		return nil
	}
	return map[string]any{"expire_time": e.ExpireTime.UTC()}
}

// VersionMismatchError is [ErrVersionMismatch] with both versions.
type VersionMismatchError struct {
	OrderID        string
	Current, Given int64
}

func (e *VersionMismatchError) Error() string {
	return fmt.Sprintf("order %s is at version %d, not %d: read it again and decide again", e.OrderID, e.Current, e.Given)
}

// Unwrap makes errors.Is(err, ErrVersionMismatch) true.
func (e *VersionMismatchError) Unwrap() error { return ErrVersionMismatch }

// ProblemFields names the versions.
func (e *VersionMismatchError) ProblemFields() map[string]any {
	return map[string]any{"current_version": e.Current, "given_version": e.Given}
}

// AttributeNotUpdatableError is [ErrAttributeNotUpdatable] naming each
// path and its modifier.
type AttributeNotUpdatableError struct {
	Fields []invalid.Field
}

func newAttributeNotUpdatable(fields []invalid.Field) *AttributeNotUpdatableError {
	sortFields(fields)
	return &AttributeNotUpdatableError{Fields: fields}
}

func (e *AttributeNotUpdatableError) Error() string {
	return (&invalid.Error{Fields: e.Fields}).Error()
}

// Unwrap makes errors.Is(err, ErrAttributeNotUpdatable) true.
func (e *AttributeNotUpdatableError) Unwrap() error { return ErrAttributeNotUpdatable }

// ProblemFields lists the fields as a 400 INVALID_ARGUMENT does.
func (e *AttributeNotUpdatableError) ProblemFields() map[string]any {
	return (&invalid.Error{Fields: e.Fields}).ProblemFields()
}

var (
	// ErrParentDeleting is returned, as a [*ParentDeletingError], by a
	// create under a parent that is being deleted.
	ErrParentDeleting = errors.New("the parent order is being deleted")
	// ErrChildrenExist is returned, as a [*ChildrenExistError], by the
	// DELETE of an order with live children whose service type restricts
	// their parent's deletion (on_parent_delete: restrict).
	ErrChildrenExist = errors.New("the order has children that restrict its deletion")
	// ErrOrderNotDeleting is returned by [Service.ForceDeleteOrder] for an
	// order whose deletion has not started: force deletion only cuts a
	// deletion short.
	ErrOrderNotDeleting = errors.New("the order is not being deleted")
)

// ParentDeletingError is [ErrParentDeleting] naming the parent.
type ParentDeletingError struct{ ParentID string }

func (e *ParentDeletingError) Error() string {
	return fmt.Sprintf("parent order %s is being deleted: no new child may join it", e.ParentID)
}

// Unwrap makes errors.Is(err, ErrParentDeleting) true.
func (e *ParentDeletingError) Unwrap() error { return ErrParentDeleting }

// ProblemFields names the parent.
func (e *ParentDeletingError) ProblemFields() map[string]any {
	return map[string]any{"parent_id": e.ParentID}
}

// ChildrenExistError is [ErrChildrenExist] naming the children.
type ChildrenExistError struct {
	OrderID  string
	Children []string
}

func (e *ChildrenExistError) Error() string {
	return fmt.Sprintf("order %s has %d live child order(s) whose service type restricts its deletion (%s): delete them first",
		e.OrderID, len(e.Children), strings.Join(e.Children, ", "))
}

// Unwrap makes errors.Is(err, ErrChildrenExist) true.
func (e *ChildrenExistError) Unwrap() error { return ErrChildrenExist }

// ProblemFields names the children.
func (e *ChildrenExistError) ProblemFields() map[string]any {
	return map[string]any{"order_id": e.OrderID, "children": e.Children}
}
