package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/resourceid"
	"github.com/stewardhq/steward/internal/schema"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// CreateOrderParams is a new order (API.md, catalog-item-instances).
type CreateOrderParams struct {
	// ID is the order's id (AEP-122, package resourceid); empty generates a UUID.
	ID            string              `json:"-"`
	Project       string              `json:"-"`
	CatalogItemID string              `json:"catalog_item_id"`
	DisplayName   string              `json:"display_name"`
	UserValues    []catalog.UserValue `json:"user_values"`
	ParentID      *string             `json:"parent_id"`
	Labels        map[string]string   `json:"labels"`
	// RequestKey identifies the request (httpapi.RequestKey): a create
	// run again under the same key returns the order the first run made.
	RequestKey string `json:"-"`
}

// CreateOrder runs an order's creation (LSM "create"): the spec built from
// the catalog item and the user's values (an [*invalid.Error] naming the
// field; a user value at an "r" attribute is an
// [*AttributeNotUpdatableError]) becomes the candidate set and the order
// enters its lifecycle's initial state. When that state's auto transfer
// validates (the built-ins' start), the policy chain runs first, in the
// request: a rejection is answered (406 POLICY_REJECTED) and nothing is
// stored, as API.md says. Then one transaction stores the order, its
// events, and everything the transfers that follow cause (the resource and
// its provisioning job, queued validations). A taken id is
// [ErrOrderExists], so a create retried with its id never provisions twice.
func (s *Service) CreateOrder(ctx context.Context, p CreateOrderParams) (Order, error) {
	var errs invalid.Errors
	switch {
	case p.ID == "":
		p.ID = store.NewID()
		audit.Describe(ctx, "catalog_item_instance:"+p.ID, nil)
	case !resourceid.Valid(p.ID):
		errs.Add("id", "%s", resourceid.Message)
	}
	if p.CatalogItemID == "" {
		errs.Add("catalog_item_id", "is required")
	}
	checkCreateLimits(&errs, p)
	if err := errs.Err(); err != nil {
		return Order{}, err
	}
	if o, ok, err := s.orderOfRequest(ctx, p); ok || err != nil {
		return o, err
	}
	// A taken id is found by the insert (its unique key), not read first:
	// every create paid for that read, and only a conflict needs it.
	item, err := s.cfg.Catalog.Item(ctx, p.CatalogItemID)
	if err != nil {
		return Order{}, err
	}
	spec, err := s.cfg.Catalog.BuildSpec(ctx, item, p.UserValues)
	if err != nil {
		return Order{}, err
	}
	if err := checkSpecSize("user_values", spec); err != nil {
		return Order{}, err
	}
	st, sch, err := s.serviceType(ctx, item.ServiceType)
	if err != nil {
		return Order{}, err
	}
	if err := checkCreateModifiers(sch, item, p.UserValues); err != nil {
		return Order{}, err
	}
	def, err := s.definition(ctx, s.cfg.DB, st.Lifecycle)
	if err != nil {
		return Order{}, err
	}
	now := s.now()
	o := Order{ID: p.ID, Project: p.Project, CatalogItemID: item.ID, ServiceType: item.ServiceType,
		DisplayName: cmpOr(p.DisplayName, p.ID), Labels: p.Labels, UserValues: p.UserValues, ParentID: p.ParentID,
		State: def.InitialState, Lifecycle: st.Lifecycle, Version: 1, Generation: 1,
		Attributes: order.Attributes{Candidate: spec}, Status: provider.StatusPending, CreateTime: now, UpdateTime: now,
		Identity: identityOf(st, spec), requestKey: p.RequestKey, valueSets: userValueSets{Candidate: p.UserValues}}
	initial, _ := def.State(def.InitialState)
	o.Terminal = initial.Deleted
	// The first validation runs in the request, so a rejection is the
	// answer to the create.
	var first *step
	if tr, ok := def.Transfer(def.InitialState, statemachine.TriggerAuto); ok && tr.Validate {
		placed, err := s.cfg.Placement.Place(ctx, placement.PlaceParams{Spec: spec, Labels: p.Labels, Project: p.Project,
			CheckWithProvider: true})
		if err != nil {
			return Order{}, err
		}
		o.validation = &placed
		first = &step{transfer: tr, trigger: statemachine.TriggerAuto}
	}
	err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		// Under the item's share lock: a concurrent delete of the item
		// either counts this order or is seen here as gone.
		if _, err := s.cfg.Catalog.ItemTx(ctx, tx, item.ID); err != nil {
			return err
		}
		n := o // a run again after a deadlock starts from the order as built
		if err := s.checkParentTx(ctx, tx, &n, st); err != nil {
			return err
		}
		recordEvent(&n, Event{Version: 1, Time: now, Trigger: eventCreate, To: n.State})
		if first != nil {
			err = s.fireTx(ctx, tx, &n, def, *first, 0)
		} else {
			err = s.enterTx(ctx, tx, &n, def, initial, 0)
		}
		if err != nil {
			return err
		}
		if err := s.insertOrderTx(ctx, tx, &n); err != nil {
			return err
		}
		o = n
		return nil
	})
	if err != nil {
		if o, ok, _ := s.orderOfRequest(ctx, p); ok {
			return o, nil // the same request, run concurrently after a takeover
		}
		return Order{}, s.takenError(ctx, p.ID, err)
	}
	s.log.InfoContext(ctx, "order created", "order_id", o.ID, "state", o.State, "instance_id", o.InstanceID,
		"provider", o.ProviderName)
	return o.asCreated(), nil
}

// takenError is err, a create's failure, naming what is taken when the id
// was: a tombstone's expire_time says when the id is free again.
func (s *Service) takenError(ctx context.Context, id string, err error) error {
	if !errors.Is(err, ErrOrderExists) {
		return err
	}
	if cur, rerr := s.orderByID(ctx, id); rerr == nil {
		return &OrderExistsError{ID: id, ExpireTime: cur.ExpireTime}
	}
	return err // the identity is taken, not the id
}

// orderOfRequest returns the order an earlier run of the same request
// created (ok), when p carries a request key.
func (s *Service) orderOfRequest(ctx context.Context, p CreateOrderParams) (Order, bool, error) {
	if p.RequestKey == "" {
		return Order{}, false, nil
	}
	id, err := s.q.OrderIDByRequestKey(ctx, s.cfg.DB, p.RequestKey)
	if errors.Is(err, store.ErrNotFound) {
		return Order{}, false, nil
	}
	if err != nil {
		return Order{}, false, err
	}
	s.log.InfoContext(ctx, "create run again after its process died: answering with the order it made",
		"order_id", id)
	o, err := s.Order(ctx, p.Project, id)
	return o, err == nil, err
}

// checkCreateModifiers refuses user values at attributes the server or
// provider sets (x-modifier r), naming each as item does.
func checkCreateModifiers(sch *schema.Schema, item catalog.Item, values []catalog.UserValue) error {
	var fields []invalid.Field
	for i, uv := range values {
		p, err := schema.ParsePath(uv.Path)
		if err == nil && sch.Modifier(p) == schema.ModifierR {
			fields = append(fields, invalid.Field{Field: fmt.Sprintf("user_values[%d].path", i),
				Message: fmt.Sprintf("%s is set by the server or provider (x-modifier r)", p),
				Path:    p.String(), DisplayName: item.DisplayNameAt(p.String())})
		}
	}
	if len(fields) > 0 {
		return &AttributeNotUpdatableError{Fields: fields}
	}
	return nil
}

// identityOf returns the order's identity value, when its type has one.
func identityOf(st catalog.ServiceType, spec map[string]any) *string {
	if st.IdentityAttribute == nil {
		return nil
	}
	v, ok := spec[*st.IdentityAttribute]
	if !ok || v == nil {
		return nil
	}
	id := fmt.Sprint(v)
	return &id
}

// Order returns the order ref names in project: its id, or
// "<service_type>.<identity_attribute>=<value>" (LSM's service identity,
// for types that declare one). An order being deleted, and one removed (a
// tombstone, until it is purged), is returned too (API.md).
func (s *Service) Order(ctx context.Context, project, ref string) (Order, error) {
	id, err := s.cfg.Orders.Resolve(ctx, project, ref)
	if err != nil {
		return Order{}, err
	}
	return scanReadOrder(s.cfg.DB.QueryRow(ctx, s.q.orderGet, id, project))
}

// showOrder reads an order as Order does, for a view only: its attribute
// sets, labels and user values are kept as stored (see scanListedOrder):
// a GET's server CPU went from about 143 to 100 µs on SQLite.
func (s *Service) showOrder(ctx context.Context, project, ref string) (Order, error) {
	id, err := s.cfg.Orders.Resolve(ctx, project, ref)
	if err != nil {
		return Order{}, err
	}
	return scanListedOrder(s.cfg.DB.QueryRow(ctx, s.q.orderShow, id, project))
}

// orderByID reads an order in any project.
func (s *Service) orderByID(ctx context.Context, id string) (Order, error) {
	return scanOrder(s.cfg.DB.QueryRow(ctx, s.q.orderLock, id))
}

// ListOrdersParams filters and pages orders.
type ListOrdersParams struct {
	// Project is one project, or auth.AllProjects for every one.
	Project       string
	ServiceType   string
	State         string
	CatalogItemID string
	ParentID      string
	// Labels keeps the orders that have every one of these labels.
	Labels      map[string]string
	ShowDeleted bool
	// NewestFirst lists by creation time descending (order_by=create_time
	// desc) instead of ascending; p.Page's token must be one of such a list.
	NewestFirst bool
	Page        store.PageRequest
}

// Orders lists a project's orders, oldest first or, with p.NewestFirst,
// newest first; either way on the index of the creation time, walked one
// way or the other. Their attribute sets are left undecoded, for a view
// (see scanListedOrder).
func (s *Service) Orders(ctx context.Context, p ListOrdersParams) (store.Page[Order], error) {
	query := s.orderLists[orderListKind{allProjects: p.Project == auth.AllProjects, newestFirst: p.NewestFirst, live: !p.ShowDeleted}]
	p.Page.Backward = p.NewestFirst
	page, err := store.ListPage(ctx, s.cfg.DB, query, p.Page, scanListedOrder,
		func(o Order) store.Cursor { return store.Cursor{Time: o.CreateTime, ID: o.ID} },
		p.Project, p.ServiceType, p.ServiceType, p.State, p.State, p.CatalogItemID, p.CatalogItemID, p.ParentID,
		p.ParentID, store.JSON(nonNilMap(p.Labels)), p.ShowDeleted)
	if err != nil {
		return page, fmt.Errorf("list orders: %w", err)
	}
	return page, nil
}
