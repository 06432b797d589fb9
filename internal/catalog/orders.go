package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// placer is what orders need from placement (*placement.Service).
type placer interface {
	Place(ctx context.Context, p placement.PlaceParams) (placement.Placement, error)
	RecordTx(ctx context.Context, tx *store.Tx, p placement.RecordParams) error
	DeleteTx(ctx context.Context, tx *store.Tx, instanceID string) error
	Rehydrate(ctx context.Context, p placement.RehydrateParams) (operations.Operation, error)
}

// CreateOrderParams is a new order (API.md, catalog-item-instances).
type CreateOrderParams struct {
	// ID is the order's id (API.md's client id rule); empty generates a UUID.
	ID            string            `json:"-"`
	Project       string            `json:"-"`
	CatalogItemID string            `json:"catalog_item_id"`
	DisplayName   string            `json:"display_name"`
	UserValues    []UserValue       `json:"user_values"`
	ParentID      *string           `json:"parent_id"`
	Labels        map[string]string `json:"labels"`
}

// CreateOrder builds the spec from the catalog item and the user's values
// (an [*invalid.Error] naming the field), places it (the policy chain's
// errors, policy.ErrNoProvider), then in one transaction stores the order
// (state creating) under a new instance id and has placement record the
// resource and queue its provisioning. A taken id is [ErrOrderExists], so
// a create retried with its id never provisions twice.
func (s *Service) CreateOrder(ctx context.Context, p CreateOrderParams) (Order, error) {
	if s.cfg.Placement == nil {
		return Order{}, errors.New("catalog: orders are not wired to placement")
	}
	var errs invalid.Errors
	switch {
	case p.ID == "":
		p.ID = uuid.NewString()
	case !idPattern.MatchString(p.ID):
		errs.Add("id", "must match %s", idPattern)
	}
	if p.CatalogItemID == "" {
		errs.Add("catalog_item_id", "is required")
	}
	if err := errs.Err(); err != nil {
		return Order{}, err
	}
	if _, err := s.Order(ctx, p.Project, p.ID, true); err == nil {
		return Order{}, fmt.Errorf("order %q: %w", p.ID, ErrOrderExists)
	}
	item, err := s.Item(ctx, p.CatalogItemID)
	if err != nil {
		return Order{}, err
	}
	spec, err := s.BuildSpec(ctx, item, p.UserValues)
	if err != nil {
		return Order{}, err
	}
	placed, err := s.cfg.Placement.Place(ctx, placement.PlaceParams{Spec: spec, Labels: p.Labels, Project: p.Project})
	if err != nil {
		return Order{}, err
	}
	instanceID := uuid.NewString()
	err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		// Under the item's share lock: a concurrent delete of the item
		// either counts this order or is seen here as gone.
		if _, err := s.ItemTx(ctx, tx, item.ID); err != nil {
			return err
		}
		t := s.now()
		_, err := tx.Exec(ctx, s.q.Get("OrderInsert"), p.ID, p.Project, item.ID, item.ServiceType,
			cmpOr(p.DisplayName, p.ID), store.JSON(nonNilMap(p.Labels)), store.JSON(nonNilSlice(p.UserValues)), p.ParentID,
			store.JSON(Attributes{Candidate: spec, Active: placed.Spec}), instanceID, placed.ProviderName, t, t)
		if errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("order %q: %w", p.ID, ErrOrderExists)
		}
		if err != nil {
			return fmt.Errorf("create order %q: %w", p.ID, err)
		}
		return s.cfg.Placement.RecordTx(ctx, tx, placement.RecordParams{
			InstanceID: instanceID, OrderID: p.ID, Project: p.Project, Labels: p.Labels,
			OriginalRequest: spec, Placement: placed,
		})
	})
	if err != nil {
		return Order{}, err
	}
	s.log.InfoContext(ctx, "order created", "order_id", p.ID, "instance_id", instanceID, "provider", placed.ProviderName)
	return s.Order(ctx, p.Project, p.ID, true)
}

// Order returns the order with the id in project. A deleted order is
// [ErrOrderNotFound] unless showDeleted.
func (s *Service) Order(ctx context.Context, project, id string, showDeleted bool) (Order, error) {
	o, err := scanOrder(s.cfg.DB.QueryRow(ctx, s.q.Get("OrderGet"), id, project))
	if err == nil && o.DeletedAt != nil && !showDeleted {
		return Order{}, ErrOrderNotFound
	}
	return o, err
}

// ListOrdersParams filters and pages orders.
type ListOrdersParams struct {
	Project       string
	ServiceType   string
	State         string
	CatalogItemID string
	ShowDeleted   bool
	Page          store.PageRequest
}

// Orders lists a project's orders, oldest first.
func (s *Service) Orders(ctx context.Context, p ListOrdersParams) (store.Page[Order], error) {
	page, err := store.ListPage(ctx, s.cfg.DB, s.q.Get("OrderList"), p.Page, scanOrder,
		func(o Order) store.Cursor { return store.Cursor{Time: o.CreateTime, ID: o.ID} },
		p.Project, p.ServiceType, p.ServiceType, p.State, p.State, p.CatalogItemID, p.CatalogItemID, p.ShowDeleted)
	if err != nil {
		return page, fmt.Errorf("list orders: %w", err)
	}
	return page, nil
}

// DeleteOrder starts the deletion of an order: deleted_at is set, the
// generation bumped and the state is deleting, and in the same transaction
// placement queues the deletion of its current resource. Deleting an order
// already deleted returns it unchanged. ifMatch, when not nil, is the
// version the caller read: another version gives [store.ErrStale].
func (s *Service) DeleteOrder(ctx context.Context, project, id string, ifMatch *int64) (Order, error) {
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		o, err := scanOrder(tx.QueryRow(ctx, s.q.Get("OrderGet"), id, project))
		if err != nil {
			return err
		}
		if ifMatch != nil && *ifMatch != o.Version {
			return store.ErrStale
		}
		if o.DeletedAt != nil {
			return nil
		}
		t := s.now()
		n, err := tx.Exec(ctx, s.q.Get("OrderMarkDeleted"), t, t, id)
		if err != nil || n == 0 {
			return err // n == 0: a concurrent delete won
		}
		return s.cfg.Placement.DeleteTx(ctx, tx, o.InstanceID)
	})
	if err != nil {
		return Order{}, err
	}
	return s.Order(ctx, project, id, true)
}

// InstanceStatusChangedTx applies a status change of an instance to the
// order whose current instance it is, in tx: the status is mirrored and the
// state follows the lifecycle. An instance no order points at is ignored.
func (s *Service) InstanceStatusChangedTx(ctx context.Context, tx *store.Tx, instanceID string,
	status provider.Status, message string) error {
	o, err := scanOrder(tx.QueryRow(ctx, s.q.Get("OrderGetByInstance"), instanceID))
	if errors.Is(err, ErrOrderNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	state := s.lifecycle.StateFor(o.State, status, o.DeletedAt != nil)
	if state == o.State && status == o.Status && message == o.StatusMessage {
		return nil
	}
	n, err := tx.Exec(ctx, s.q.Get("OrderSetStatus"), string(status), message, state, s.now(), o.ID, o.Version)
	if err != nil {
		return fmt.Errorf("record status of order %s: %w", o.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("record status of order %s: %w", o.ID, store.ErrStale)
	}
	if state != o.State {
		s.log.InfoContext(ctx, "order state changed", "order_id", o.ID, "from", o.State, "to", state,
			"instance_id", instanceID, "status", status)
	}
	return nil
}

// LiveOrdersOfCatalogItemTx counts the orders of the item not yet
// terminated, in tx; it implements [OrderCounter].
func (s *Service) LiveOrdersOfCatalogItemTx(ctx context.Context, tx *store.Tx, catalogItemID string) (int, error) {
	var n int
	err := tx.QueryRow(ctx, s.q.Get("OrderCountLiveByCatalogItem"), catalogItemID).Scan(&n)
	return n, err
}

func scanOrder(row scanner) (Order, error) {
	var o Order
	var labels, values, attrs json.RawMessage
	var status string
	err := row.Scan(&o.ID, &o.Project, &o.CatalogItemID, &o.ServiceType, &o.DisplayName, &labels, &values,
		&o.ParentID, &o.State, &o.Lifecycle, &o.Version, &o.Generation, &attrs, &o.InstanceID, &o.ProviderName,
		&status, &o.StatusMessage, &o.CreateTime, &o.UpdateTime, &o.DeletedAt)
	if errors.Is(err, store.ErrNotFound) {
		return Order{}, ErrOrderNotFound
	}
	if err != nil {
		return Order{}, fmt.Errorf("read order: %w", err)
	}
	o.Status = provider.Status(status)
	for _, f := range []struct {
		raw json.RawMessage
		dst any
	}{{labels, &o.Labels}, {values, &o.UserValues}, {attrs, &o.Attributes}} {
		if err := json.Unmarshal(f.raw, f.dst); err != nil {
			return Order{}, fmt.Errorf("read order %s: %w", o.ID, err)
		}
	}
	return o, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
