package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// OpenAPI returns an OpenAPI 3.1 document for the orders of one service
// type (LSM's per-entity endpoints): the order routes with the type's
// attribute schema in place of the generic spec, so a client generator
// gets typed attributes. The schema is embedded under its own $id, so its
// local "$ref"s resolve inside it; x-modifier stays on the properties.
func (s *Service) OpenAPI(ctx context.Context, id string) (map[string]any, error) {
	st, err := s.ServiceType(ctx, id)
	if err != nil {
		return nil, err
	}
	var attrs map[string]any
	if err := json.Unmarshal(st.Schema, &attrs); err != nil {
		return nil, fmt.Errorf("service type %q: %w", id, err)
	}
	attrs["$id"] = "steward:///service-types/" + id + "/attributes"
	name := exportedName(id)
	ref := func(schema string) map[string]any {
		return map[string]any{"$ref": "#/components/schemas/" + name + schema}
	}
	problem := map[string]any{"description": "An error (application/problem+json with a stable reason).",
		"content": map[string]any{"application/problem+json": map[string]any{"schema": map[string]any{"type": "object"}}}}
	order := map[string]any{"description": "The order.", "content": map[string]any{
		"application/json": map[string]any{"schema": ref("Order")}}}
	idParam := map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string"},
		"description": "The order's id" + identityNote(st)}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "Steward orders of service type " + id,
			"version":     fmt.Sprint(st.Version),
			"description": "Orders (catalog item instances) of " + id + ", following the lifecycle " + st.Lifecycle + ".",
		},
		"paths": map[string]any{
			"/api/v1/catalog-item-instances": map[string]any{
				"post": map[string]any{"operationId": "Create" + name, "requestBody": map[string]any{"required": true,
					"content": map[string]any{"application/json": map[string]any{"schema": ref("Create")}}},
					"responses": map[string]any{"201": order, "default": problem}},
				"get": map[string]any{"operationId": "List" + name,
					"parameters": []any{map[string]any{"name": "service_type", "in": "query", "required": true,
						"schema": map[string]any{"const": id}}},
					"responses": map[string]any{"200": map[string]any{"description": "A page of orders.",
						"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{
							"type": "object", "properties": map[string]any{
								"results":         map[string]any{"type": "array", "items": ref("Order")},
								"next_page_token": map[string]any{"type": "string"}}}}}}, "default": problem}},
			},
			"/api/v1/catalog-item-instances/{id}": map[string]any{
				"parameters": []any{idParam},
				"get":        map[string]any{"operationId": "Get" + name, "responses": map[string]any{"200": order, "default": problem}},
				"patch": map[string]any{"operationId": "Update" + name, "requestBody": map[string]any{"required": true,
					"content": map[string]any{"application/json": map[string]any{"schema": ref("Update")}}},
					"responses": map[string]any{"200": order, "default": problem}},
				"delete": map[string]any{"operationId": "Delete" + name, "responses": map[string]any{"202": order, "default": problem}},
			},
		},
		"components": map[string]any{"schemas": map[string]any{
			name + "Attributes": attrs,
			// Closed, as api/openapi.yaml's CatalogItemInstanceCreate and
			// CatalogItemInstanceUpdate: an unknown member is a 400.
			name + "Create": map[string]any{"type": "object", "required": []any{"catalog_item_id"}, "properties": map[string]any{
				"catalog_item_id": map[string]any{"type": "string", "description": "A catalog item of service type " + id + "."},
				"display_name":    map[string]any{"type": "string"},
				"user_values":     map[string]any{"type": "array", "items": userValueSchema()},
				"parent_id":       map[string]any{"type": []any{"string", "null"}},
				"labels":          map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			}, "additionalProperties": false},
			name + "Update": map[string]any{"type": "object", "properties": map[string]any{
				"user_values": map[string]any{"type": "array", "items": userValueSchema()},
				"edits": map[string]any{"type": "array", "description": "Dict-path edits; only x-modifier rw+ attributes change.",
					"items": map[string]any{"type": "object", "required": []any{"path"}, "properties": map[string]any{
						"path": map[string]any{"type": "string"}, "value": map[string]any{}}}},
				"labels": map[string]any{"type": "object", "description": "Labels to set (a string) or remove (null).",
					"additionalProperties": map[string]any{"type": []any{"string", "null"}}},
				"display_name": map[string]any{"type": "string"},
			}, "additionalProperties": false},
			name + "Order": map[string]any{"type": "object", "properties": map[string]any{
				"id":           map[string]any{"type": "string"},
				"service_type": map[string]any{"const": id},
				"state":        map[string]any{"type": "string"},
				"version":      map[string]any{"type": "integer"},
				"attributes": map[string]any{"type": "object", "properties": map[string]any{
					"candidate": map[string]any{"oneOf": []any{ref("Attributes"), map[string]any{"type": "null"}}},
					"active":    map[string]any{"oneOf": []any{ref("Attributes"), map[string]any{"type": "null"}}},
					"rollback":  map[string]any{"oneOf": []any{ref("Attributes"), map[string]any{"type": "null"}}},
				}},
			}, "additionalProperties": true},
		}},
	}, nil
}

func userValueSchema() map[string]any {
	return map[string]any{"type": "object", "required": []any{"path"}, "properties": map[string]any{
		"path": map[string]any{"type": "string"}, "value": map[string]any{}}}
}

// identityNote says how an identity attribute names an order.
func identityNote(st ServiceType) string {
	if st.IdentityAttribute == nil {
		return "."
	}
	return fmt.Sprintf(", or %s.%s=<value>.", st.ID, *st.IdentityAttribute)
}

// exportedName turns a type id into a schema name: cache-replica → CacheReplica.
func exportedName(id string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(id, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
