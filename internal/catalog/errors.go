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
	// ErrServiceTypeExists is returned by [Service.CreateServiceType] when
	// the id is taken, by a stored or a built-in type.
	ErrServiceTypeExists = errors.New("a service type with this id already exists")
	// ErrServiceTypeReadOnly is returned when a built-in service type would
	// be replaced or deleted.
	ErrServiceTypeReadOnly = errors.New("built-in service types are read-only")
	// ErrServiceTypeInUse is returned when a service type cannot be
	// replaced or deleted because of what uses it. The error is a
	// [*ServiceTypeInUseError].
	ErrServiceTypeInUse = errors.New("service type in use")
	// ErrUnknownLifecycle is returned when a service type names a
	// lifecycle no lifecycle has the id of.
	ErrUnknownLifecycle = errors.New("unknown lifecycle")
	// ErrCatalogItemNotFound is returned when no catalog item has the id.
	ErrCatalogItemNotFound = errors.New("catalog item not found")
	// ErrCatalogItemExists is returned by [Service.CreateItem] when the id
	// is taken.
	ErrCatalogItemExists = errors.New("a catalog item with this id already exists")
	// ErrCatalogItemInUse is returned by [Service.DeleteItem] while orders
	// made from the item are live. The error is an [*ItemInUseError].
	ErrCatalogItemInUse = errors.New("catalog item has live orders")
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

// ServiceTypeInUseError is [ErrServiceTypeInUse] with what uses the type.
type ServiceTypeInUseError struct {
	ServiceTypeID string
	// Why says what the refused change would break.
	Why          string
	CatalogItems int
	LiveOrders   int
	ChildTypes   []string
	// BrokenOrders counts the live orders a new schema refuses; Examples
	// names a few of them.
	BrokenOrders int
	Examples     []string
}

func (e *ServiceTypeInUseError) Error() string {
	msg := fmt.Sprintf("service type %q: %s", e.ServiceTypeID, e.Why)
	if e.BrokenOrders == 0 {
		msg += fmt.Sprintf(" (%d catalog item(s), %d live order(s), %d child type(s))",
			e.CatalogItems, e.LiveOrders, len(e.ChildTypes))
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrServiceTypeInUse) true.
func (e *ServiceTypeInUseError) Unwrap() error { return ErrServiceTypeInUse }

// ProblemFields names the type and what uses it.
func (e *ServiceTypeInUseError) ProblemFields() map[string]any {
	f := map[string]any{"service_type_id": e.ServiceTypeID, "catalog_items": e.CatalogItems,
		"live_orders": e.LiveOrders, "child_service_types": append([]string{}, e.ChildTypes...)}
	if e.BrokenOrders > 0 {
		f["broken_orders"] = e.BrokenOrders
		f["broken_order_examples"] = e.Examples
	}
	return f
}
