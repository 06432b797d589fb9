package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/catalog"
)

// devCatalog is what a --dev server offers to order out of the box: a
// container the in-process process provider runs as a local process, a
// cluster of such processes, a process that waits for an adapter, a
// PostgreSQL database for a postgres provider started beside it, and a web
// application for a kubernetes provider.
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
}, {
	ID:          "namespaced-sleeper",
	DisplayName: "Namespaced sleeper: a local process, Ready once the example adapter gave it a Kubernetes namespace",
	ServiceType: devNamespacedType.ID,
	Defaults: map[string]any{
		"process":        map[string]any{"command": []any{"sleep"}, "args": []any{"3600"}},
		"restart_policy": "on_failure",
	},
	Fields: []catalog.Field{{Path: "process.args", DisplayName: "Arguments", Editable: true}},
}, {
	ID:          "postgres-small",
	DisplayName: "Small PostgreSQL database: a database and its owner on a server run by steward provider postgres",
	ServiceType: "postgres-database",
	Defaults:    map[string]any{"connection_limit": 20},
	Fields: []catalog.Field{
		{Path: "database", DisplayName: "Database name", Editable: true},
		{Path: "connection_limit", DisplayName: "Connection limit", Editable: true,
			ValidationSchema: json.RawMessage(`{"minimum": 1, "maximum": 100}`)},
		{Path: "extensions", DisplayName: "Extensions", Editable: true},
		{Path: "retain_on_delete", DisplayName: "Keep a final dump on delete", Editable: true},
	},
}, {
	ID:          "web-app",
	DisplayName: "Web application: a container image on a Kubernetes cluster served by steward provider kubernetes",
	ServiceType: "container-app",
	Defaults: map[string]any{
		"image":    "nginx:1.27",
		"replicas": 2,
		"ports":    []any{map[string]any{"container_port": 80, "service_port": 80}},
		"expose":   "cluster",
		"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"},
			"limits": map[string]any{"cpu": "500m", "memory": "256Mi"}},
	},
	Fields: []catalog.Field{
		{Path: "image", DisplayName: "Image", Editable: true},
		{Path: "replicas", DisplayName: "Replicas", Editable: true},
		{Path: "env", DisplayName: "Environment", Editable: true},
		{Path: "ports", DisplayName: "Ports", Editable: true},
		{Path: "resources", DisplayName: "CPU and memory", Editable: true},
	},
}}

// devNamespacedType is the type of the README's adapter walkthrough: the
// process provider runs its orders, and they are Ready only once the
// example adapter (examples/adapters/cluster-namespace.yaml) reported its
// namespace (a built-in type cannot be given
// required adapters, and the sentinel publishes only for types that have
// some).
var devNamespacedType = catalog.ServiceTypeParams{
	ID: "namespaced-process",
	Schema: json.RawMessage(`{"type": "object", "properties": {"process": {"type": "object"},
		"restart_policy": {"type": "string"}}}`),
	RequiredAdapters: []string{"cluster-namespace"},
}

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
	for _, st := range []catalog.ServiceTypeParams{devClusterType, devNamespacedType} {
		if _, err := s.catalog.CreateServiceType(ctx, st); err != nil &&
			!errors.Is(err, catalog.ErrServiceTypeExists) {
			return fmt.Errorf("server: seed service type %s: %w", st.ID, err)
		}
	}
	for _, item := range devCatalog {
		_, err := s.catalog.CreateItem(ctx, item)
		if err != nil && !errors.Is(err, catalog.ErrCatalogItemExists) {
			return fmt.Errorf("server: seed catalog item %s: %w", item.ID, err)
		}
	}
	return nil
}
