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

// jsonArg encodes v for a JSON column.
func jsonArg(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("catalog: encode %T: %v", v, err)) // only normalized JSON values reach here
	}
	return b
}
