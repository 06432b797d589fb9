package catalog

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// itemRow is a row of the queries that read whole catalog items: they
// return the same columns.
type itemRow interface {
	CatalogItemGetRow | CatalogItemGetSharedRow | CatalogItemLockRow | CatalogItemListRow
}

// itemFromRow makes an Item of a row read (err is the read's error).
func itemFromRow[R itemRow](row R, err error) (Item, error) {
	if errors.Is(err, store.ErrNotFound) {
		return Item{}, ErrCatalogItemNotFound
	}
	if err != nil {
		return Item{}, fmt.Errorf("read catalog item: %w", err)
	}
	r := CatalogItemGetRow(row)
	it := Item{ID: r.ID, DisplayName: r.DisplayName, ServiceType: r.ServiceType, Version: r.Version,
		CreateTime: r.CreateTime, UpdateTime: r.UpdateTime}
	if err := json.Unmarshal(r.Defaults, &it.Defaults); err != nil {
		return Item{}, fmt.Errorf("read catalog item %s defaults: %w", it.ID, err)
	}
	if err := json.Unmarshal(r.Fields, &it.Fields); err != nil {
		return Item{}, fmt.Errorf("read catalog item %s fields: %w", it.ID, err)
	}
	return it, nil
}

// serviceTypeRow is a row of the queries that read whole service types.
type serviceTypeRow interface {
	ServiceTypeGetRow | ServiceTypeLockRow | ServiceTypeListRow
}

// serviceTypeFromRow makes a ServiceType of a row read (err is the read's error).
func serviceTypeFromRow[R serviceTypeRow](row R, err error) (ServiceType, error) {
	if errors.Is(err, store.ErrNotFound) {
		return ServiceType{}, ErrServiceTypeNotFound
	}
	if err != nil {
		return ServiceType{}, fmt.Errorf("read service type: %w", err)
	}
	r := ServiceTypeGetRow(row)
	st := ServiceType{ID: r.ID, Schema: json.RawMessage(r.Schema), Lifecycle: r.Lifecycle,
		IdentityAttribute: r.IdentityAttribute, ParentServiceType: r.ParentServiceType,
		OnParentDelete: r.OnParentDelete, Version: r.Version, CreateTime: r.CreateTime,
		UpdateTime: r.UpdateTime}
	if err := json.Unmarshal(r.RequiredAdapters, &st.RequiredAdapters); err != nil {
		return ServiceType{}, fmt.Errorf("read service type %s adapters: %w", st.ID, err)
	}
	if err := json.Unmarshal(r.Runtime, &st.Runtime); err != nil {
		return ServiceType{}, fmt.Errorf("read service type %s runtime: %w", st.ID, err)
	}
	return st, nil
}
