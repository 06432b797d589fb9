package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/catalog"
)

// devCatalog is what a --dev server offers to order out of the box: a
// container the in-process process provider runs as a local process.
var devCatalog = []catalog.CreateItemParams{{
	ID:          "sleeper",
	DisplayName: "Sleeper: a supervised local process",
	ServiceType: "container",
	Defaults: map[string]any{
		"process":        map[string]any{"command": []any{"sleep"}, "args": []any{"3600"}},
		"restart_policy": "on_failure",
	},
	Fields: []catalog.Field{
		{Path: "process.args", DisplayName: "Arguments", Editable: true},
		{Path: "restart_policy", DisplayName: "Restart policy", Editable: true,
			ValidationSchema: json.RawMessage(`{"enum": ["always", "on_failure", "never"]}`)},
	},
}}

// seedDevCatalog creates the dev catalog items that do not exist yet; it is
// idempotent, so a restart on the same data dir keeps what was changed.
func (s *Server) seedDevCatalog(ctx context.Context) error {
	for _, item := range devCatalog {
		_, err := s.catalog.CreateItem(ctx, item)
		if err != nil && !errors.Is(err, catalog.ErrCatalogItemExists) {
			return fmt.Errorf("server: seed catalog item %s: %w", item.ID, err)
		}
	}
	return nil
}
