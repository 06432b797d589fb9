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
}, {
	ID:          "sleeper-cluster",
	DisplayName: "Sleeper cluster: one server and two agents, each a local process, repaired like a Kubernetes runtime",
	ServiceType: devClusterType.ID,
	Defaults: map[string]any{
		"process": map[string]any{"command": []any{"sleep"}, "args": []any{"3600"}},
		// Killed members stay down until a repair restarts them.
		"restart_policy": "never",
		"members": []any{
			map[string]any{"id": "server-0", "role": "server"},
			map[string]any{"id": "agent-0", "role": "agent"},
			map[string]any{"id": "agent-1", "role": "agent"},
		},
	},
	Fields: []catalog.Field{{Path: "members", DisplayName: "Members", Editable: true}},
}}

// devClusterType is the service type of app instances the process provider
// runs as several member processes: its runtime is kubernetes-like, so it
// is reconciled and repaired, never restarted as a whole.
var devClusterType = catalog.ServiceTypeParams{
	ID:      "process-cluster",
	Schema:  json.RawMessage(`{"type": "object", "properties": {"members": {"type": "array"}}}`),
	Runtime: &catalog.Runtime{Kind: catalog.RuntimeKindKubernetes, Members: true},
}

// seedDevCatalog creates the dev catalog items that do not exist yet; it is
// idempotent, so a restart on the same data dir keeps what was changed.
func (s *Server) seedDevCatalog(ctx context.Context) error {
	if _, err := s.catalog.CreateServiceType(ctx, devClusterType); err != nil &&
		!errors.Is(err, catalog.ErrServiceTypeExists) {
		return fmt.Errorf("server: seed service type %s: %w", devClusterType.ID, err)
	}
	for _, item := range devCatalog {
		_, err := s.catalog.CreateItem(ctx, item)
		if err != nil && !errors.Is(err, catalog.ErrCatalogItemExists) {
			return fmt.Errorf("server: seed catalog item %s: %w", item.ID, err)
		}
	}
	return nil
}
