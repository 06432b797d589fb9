package catalog

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/store"
)

//go:embed sql
var sqlFS embed.FS

type scanner interface{ Scan(dest ...any) error }

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

// listPage runs a keyset list query whose last three parameters are the
// cursor (time, id) and the limit, and returns one page.
func listPage[T any](ctx context.Context, db *store.DB, query string, page store.PageRequest,
	scan func(scanner) (T, error), cursor func(T) store.Cursor, filters ...any) (store.Page[T], error) {
	size := cmp.Or(page.Size, store.DefaultPageSize)
	at, after := page.Keyset()
	rows, err := db.Query(ctx, query, append(filters, at, after, size+1)...)
	if err != nil {
		return store.Page[T]{}, err
	}
	defer rows.Close()
	var items []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return store.Page[T]{}, err
		}
		items = append(items, v)
	}
	if err := rows.Err(); err != nil {
		return store.Page[T]{}, err
	}
	return store.NewPage(items, size, cursor), nil
}

// jsonArg encodes v for a JSON column.
func jsonArg(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("catalog: encode %T: %v", v, err)) // only normalized JSON values reach here
	}
	return b
}
