package catalog

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
)

// builtinIDs are the service types API.md ships. Each has a schema in
// servicetypes/<id>.json, modelled on DCM's service type definitions in
// snake_case and open at every level: providers may read fields Steward does
// not know.
var builtinIDs = []string{"cluster", "container", "container-app", "database", "postgres-database", "vm"}

// builtinRuntimes are the runtimes of the built-in types that declare one:
// a container app is restarted (a rollout restart) or reconciled as a
// whole.
var builtinRuntimes = map[string]*Runtime{"container-app": {Kind: RuntimeKindSimple}}

//go:embed servicetypes/*.json
var builtinSchemas embed.FS

// builtinServiceTypes returns the built-in service types, schemas compacted.
func builtinServiceTypes() ([]ServiceType, error) {
	out := make([]ServiceType, 0, len(builtinIDs))
	for _, id := range builtinIDs {
		raw, err := builtinSchemas.ReadFile("servicetypes/" + id + ".json")
		if err != nil {
			return nil, fmt.Errorf("read built-in service type %q: %w", id, err)
		}
		var schema bytes.Buffer
		if err := json.Compact(&schema, raw); err != nil {
			return nil, fmt.Errorf("read built-in service type %q: %w", id, err)
		}
		out = append(out, ServiceType{
			ID:               id,
			Schema:           schema.Bytes(),
			Lifecycle:        LifecycleSimple,
			OnParentDelete:   OnParentDeleteCascade,
			RequiredAdapters: []string{},
			Runtime:          clonePtr(builtinRuntimes[id]),
		})
	}
	return out, nil
}
