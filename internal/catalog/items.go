package catalog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/resourceid"
	"github.com/stewardhq/steward/internal/store"
)

// CreateItemParams is a new catalog item. Fields are as in [Item].
type CreateItemParams struct {
	// ID is the item's id (AEP-122, package resourceid); empty generates a UUID.
	ID          string         `json:"-"`
	DisplayName string         `json:"display_name"`
	ServiceType string         `json:"service_type"`
	Defaults    map[string]any `json:"defaults"`
	Fields      []Field        `json:"fields"`
}

// CreateItem stores a new catalog item after checking it (an
// [*invalid.Error] naming each bad field; see [Item] and [Field] for the
// rules). A taken id is [ErrCatalogItemExists], so a create retried with
// its id never makes a second item.
func (s *Service) CreateItem(ctx context.Context, p CreateItemParams) (Item, error) {
	it := Item{ID: p.ID, DisplayName: p.DisplayName, ServiceType: p.ServiceType, Defaults: p.Defaults, Fields: p.Fields}
	switch {
	case it.ID == "":
		it.ID = store.NewID()
		audit.Describe(ctx, "catalog_item:"+it.ID, nil)
	case !resourceid.Valid(it.ID):
		return Item{}, resourceid.Check("id", it.ID)
	}
	if err := normalizeItem(&it); err != nil {
		return Item{}, err
	}
	if err := checkItem(ctx, s.cfg.ServiceTypes, it); err != nil {
		return Item{}, err
	}
	t := s.now()
	_, err := s.q.CatalogItemInsert(ctx, s.cfg.DB, CatalogItemInsertParams{ID: it.ID, DisplayName: it.DisplayName,
		ServiceType: it.ServiceType, Defaults: store.JSON(it.Defaults), Fields: store.JSON(it.Fields), CreateTime: t,
		UpdateTime: t})
	if errors.Is(err, store.ErrAlreadyExists) {
		return Item{}, fmt.Errorf("catalog item %q: %w", it.ID, ErrCatalogItemExists)
	}
	if err != nil {
		return Item{}, fmt.Errorf("create catalog item %q: %w", it.ID, err)
	}
	s.log.InfoContext(ctx, "catalog item created", "catalog_item_id", it.ID, "service_type", it.ServiceType)
	return s.Item(ctx, it.ID)
}

// Item returns the catalog item with the id, or [ErrCatalogItemNotFound].
func (s *Service) Item(ctx context.Context, id string) (Item, error) {
	return itemFromRow(s.q.CatalogItemGet(ctx, s.cfg.DB, id))
}

// ItemTx returns the catalog item with the id, read in tx, or
// [ErrCatalogItemNotFound]. The order flow reads the item it builds an
// order from with it: on PostgreSQL it holds a share lock on the item until
// tx ends, so a concurrent [Service.DeleteItem] waits and then counts the
// new order.
func (s *Service) ItemTx(ctx context.Context, tx *store.Tx, id string) (Item, error) {
	return itemFromRow(s.q.CatalogItemGetShared(ctx, tx, id))
}

// ListItemsParams filters and pages catalog items.
type ListItemsParams struct {
	// ServiceType, when set, keeps only items of that service type.
	ServiceType string
	Page        store.PageRequest
}

// Items lists catalog items, oldest first.
func (s *Service) Items(ctx context.Context, p ListItemsParams) (store.Page[Item], error) {
	size := cmp.Or(p.Page.Size, store.DefaultPageSize)
	afterTime, afterID := p.Page.Keyset()
	rows, err := s.q.CatalogItemList(ctx, s.cfg.DB, CatalogItemListParams{ServiceType: p.ServiceType,
		AfterTime: afterTime, AfterID: afterID, Limit: int64(size + 1)})
	if err != nil {
		return store.Page[Item]{}, fmt.Errorf("list catalog items: %w", err)
	}
	items := make([]Item, 0, len(rows))
	for _, r := range rows {
		it, err := itemFromRow(r, nil)
		if err != nil {
			return store.Page[Item]{}, fmt.Errorf("list catalog items: %w", err)
		}
		items = append(items, it)
	}
	return store.NewPage(items, p.Page, func(it Item) store.Cursor { return store.Cursor{Time: it.CreateTime, ID: it.ID} }), nil
}

// ItemPatch is a JSON merge patch (RFC 7396) of a catalog item. A member
// that is absent (nil) is kept; JSON null resets display_name to the id,
// defaults to {} and fields to []. Defaults merges into the current
// defaults (null removes a property); fields replaces the whole list.
// ServiceType cannot change: any other value than the current one is
// refused.
type ItemPatch struct {
	DisplayName json.RawMessage `json:"display_name"`
	ServiceType json.RawMessage `json:"service_type"`
	Defaults    json.RawMessage `json:"defaults"`
	Fields      json.RawMessage `json:"fields"`
}

// UpdateItem applies patch to the catalog item with the id and checks the
// result as [Service.CreateItem] does. ifMatch, when not nil, is the
// version the caller read: another version gives [store.ErrStale]. Orders
// already made keep the spec they were built with.
func (s *Service) UpdateItem(ctx context.Context, id string, patch ItemPatch, ifMatch *int64) (Item, error) {
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		it, err := itemFromRow(s.q.CatalogItemLock(ctx, tx, id))
		if err != nil {
			return err
		}
		if ifMatch != nil && *ifMatch != it.Version {
			return store.ErrStale
		}
		if err := applyPatch(&it, patch); err != nil {
			return err
		}
		if err := normalizeItem(&it); err != nil {
			return err
		}
		if err := checkItem(ctx, s.cfg.ServiceTypes, it); err != nil {
			return err
		}
		n, err := s.q.CatalogItemUpdate(ctx, tx, CatalogItemUpdateParams{DisplayName: it.DisplayName,
			Defaults: store.JSON(it.Defaults), Fields: store.JSON(it.Fields), UpdateTime: s.now(), ID: it.ID,
			Version: it.Version})
		if err == nil && n == 0 {
			return store.ErrStale
		}
		return err
	})
	if err != nil {
		return Item{}, err
	}
	return s.Item(ctx, id)
}

// DeleteItem removes the catalog item with the id. It refuses with an
// [*ItemInUseError] ([ErrCatalogItemInUse]) while [Config.Orders] counts
// live orders of the item. ifMatch, when not nil, is the version the caller
// read: another version gives [store.ErrStale]. A missing item is
// [ErrCatalogItemNotFound].
func (s *Service) DeleteItem(ctx context.Context, id string, ifMatch *int64) error {
	return s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		it, err := itemFromRow(s.q.CatalogItemLock(ctx, tx, id))
		if err != nil {
			return err
		}
		if ifMatch != nil && *ifMatch != it.Version {
			return store.ErrStale
		}
		// The item's row lock (FOR UPDATE on PostgreSQL) is held while its
		// orders are counted: an order create that reads the item with
		// [Service.ItemTx] in its own transaction either commits first (and
		// is counted) or waits and then finds the item gone.
		live, err := s.cfg.Orders.LiveOfItemTx(ctx, tx, id)
		if err != nil {
			return fmt.Errorf("count orders of catalog item %q: %w", id, err)
		}
		if live > 0 {
			return &ItemInUseError{ItemID: id, LiveOrders: live}
		}
		n, err := s.q.CatalogItemDelete(ctx, tx, it.ID, it.Version)
		if err != nil {
			return fmt.Errorf("delete catalog item %q: %w", id, err)
		}
		if n == 0 {
			return store.ErrStale
		}
		s.log.InfoContext(ctx, "catalog item deleted", "catalog_item_id", id)
		return nil
	})
}

// applyPatch applies a merge patch to it, leaving it unchecked.
func applyPatch(it *Item, p ItemPatch) error {
	var errs invalid.Errors
	if p.DisplayName != nil {
		var name *string
		if err := json.Unmarshal(p.DisplayName, &name); err != nil {
			errs.Add("display_name", "must be a string")
		}
		it.DisplayName = "" // null: back to the default
		if name != nil {
			it.DisplayName = *name
		}
	}
	if p.ServiceType != nil {
		var st *string
		if err := json.Unmarshal(p.ServiceType, &st); err != nil || st == nil || *st != it.ServiceType {
			return invalid.Immutable("service_type", it.ServiceType)
		}
	}
	if p.Defaults != nil {
		var patch any
		if err := json.Unmarshal(p.Defaults, &patch); err != nil {
			return fmt.Errorf("decode defaults patch: %w", err)
		}
		switch patch := patch.(type) {
		case nil:
			it.Defaults = map[string]any{}
		case map[string]any:
			it.Defaults = mergePatch(it.Defaults, patch)
		default:
			errs.Add("defaults", "must be an object or null")
		}
	}
	if p.Fields != nil {
		var fields []Field
		if err := json.Unmarshal(p.Fields, &fields); err != nil {
			errs.Add("fields", "must be an array of fields: %v", err)
		}
		it.Fields = fields
	}
	return errs.Err()
}

// mergePatch applies an RFC 7396 merge patch object to target and returns
// the result; target is changed in place where it is an object.
func mergePatch(target map[string]any, patch map[string]any) map[string]any {
	if target == nil {
		target = map[string]any{}
	}
	for k, v := range patch {
		switch v := v.(type) {
		case nil:
			delete(target, k)
		case map[string]any:
			sub, _ := target[k].(map[string]any)
			target[k] = mergePatch(sub, v)
		default:
			target[k] = v
		}
	}
	return target
}
