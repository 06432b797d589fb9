package catalog

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/store"
)

//go:embed sql
var sqlFS embed.FS

type scanner = store.Scanner

func scanItem(row scanner) (Item, error) {
	var it Item
	var defaults, fields json.RawMessage
	err := row.Scan(&it.ID, &it.DisplayName, &it.ServiceType, &defaults, &fields, &it.Version, &it.CreateTime, &it.UpdateTime)
	if errors.Is(err, store.ErrNotFound) {
		return Item{}, ErrCatalogItemNotFound
	}
	if err != nil {
		return Item{}, fmt.Errorf("read catalog item: %w", err)
	}
	if err := json.Unmarshal(defaults, &it.Defaults); err != nil {
		return Item{}, fmt.Errorf("read catalog item %s defaults: %w", it.ID, err)
	}
	if err := json.Unmarshal(fields, &it.Fields); err != nil {
		return Item{}, fmt.Errorf("read catalog item %s fields: %w", it.ID, err)
	}
	return it, nil
}

func scanServiceType(row scanner) (ServiceType, error) {
	var st ServiceType
	var schemaText string
	var adapters, runtime json.RawMessage
	err := row.Scan(&st.ID, &schemaText, &st.Lifecycle, &st.IdentityAttribute, &st.ParentServiceType,
		&st.OnParentDelete, &adapters, &runtime, &st.Version, &st.CreateTime, &st.UpdateTime)
	if errors.Is(err, store.ErrNotFound) {
		return ServiceType{}, ErrServiceTypeNotFound
	}
	if err != nil {
		return ServiceType{}, fmt.Errorf("read service type: %w", err)
	}
	st.Schema = json.RawMessage(schemaText)
	if err := json.Unmarshal(adapters, &st.RequiredAdapters); err != nil {
		return ServiceType{}, fmt.Errorf("read service type %s adapters: %w", st.ID, err)
	}
	if err := json.Unmarshal(runtime, &st.Runtime); err != nil {
		return ServiceType{}, fmt.Errorf("read service type %s runtime: %w", st.ID, err)
	}
	return st, nil
}

func scanString(row scanner) (string, error) {
	var s string
	err := row.Scan(&s)
	return s, err
}
