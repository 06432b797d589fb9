package placement

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

type scanner = store.Scanner

func scanResource(row scanner) (Resource, error) {
	var r Resource
	var labels, original, validated json.RawMessage
	var status string
	err := row.Scan(&r.ID, &r.CatalogItemInstanceID, &r.Project, &r.ServiceType, &labels, &original, &validated,
		&r.ProviderName, &r.PolicyStatus, &status, &r.StatusMessage, &r.CreateTime, &r.UpdateTime, &r.DeletedAt,
		&r.RehydratedFrom, &r.RehydrationStatus, &r.LastRehydration)
	if errors.Is(err, store.ErrNotFound) {
		return Resource{}, ErrResourceNotFound
	}
	if err != nil {
		return Resource{}, fmt.Errorf("read resource: %w", err)
	}
	r.Status = provider.Status(status)
	for _, f := range []struct {
		raw json.RawMessage
		dst any
	}{{labels, &r.Labels}, {original, &r.OriginalRequest}, {validated, &r.ValidatedRequest}} {
		if err := json.Unmarshal(f.raw, f.dst); err != nil {
			return Resource{}, fmt.Errorf("read resource %s: %w", r.ID, err)
		}
	}
	return r, nil
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}
