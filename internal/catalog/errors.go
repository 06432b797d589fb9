package catalog

import (
	"errors"
	"fmt"
)

var (
	// ErrServiceTypeNotFound is returned by [ServiceTypes.Get],
	// [ServiceTypes.ValidateSpec] and [Service.ServiceType] when no service
	// type has the id. It is wrapped with the id, so test for it with
	// [errors.Is].
	ErrServiceTypeNotFound = errors.New("service type not found")
	// ErrCatalogItemNotFound is returned when no catalog item has the id.
	ErrCatalogItemNotFound = errors.New("catalog item not found")
	// ErrCatalogItemExists is returned by [Service.CreateItem] when the id
	// is taken.
	ErrCatalogItemExists = errors.New("a catalog item with this id already exists")
	// ErrCatalogItemInUse is returned by [Service.DeleteItem] while orders
	// made from the item are live. The error is an [*ItemInUseError].
	ErrCatalogItemInUse = errors.New("catalog item has live orders")
	// ErrOrderNotFound is returned when no order (catalog item instance)
	// has the id in the caller's project, or it was deleted and deleted
	// orders were not asked for.
	ErrOrderNotFound = errors.New("order not found")
	// ErrOrderExists is returned by [Service.CreateOrder] when the id is
	// taken (by a live or a deleted order).
	ErrOrderExists = errors.New("an order with this id already exists")
)

// ItemInUseError is [ErrCatalogItemInUse] with the number of live orders.
type ItemInUseError struct {
	ItemID     string
	LiveOrders int
}

func (e *ItemInUseError) Error() string {
	return fmt.Sprintf("catalog item %q has %d live order(s)", e.ItemID, e.LiveOrders)
}

// Unwrap makes errors.Is(err, ErrCatalogItemInUse) true.
func (e *ItemInUseError) Unwrap() error { return ErrCatalogItemInUse }

// ProblemFields names the item and the count.
func (e *ItemInUseError) ProblemFields() map[string]any {
	return map[string]any{"catalog_item_id": e.ItemID, "live_orders": e.LiveOrders}
}
