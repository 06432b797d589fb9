package httpapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// LoadSpec parses and checks an OpenAPI document, and renders it as JSON for
// GET /api/v1/openapi.json, ending in a newline as every JSON answer does.
func LoadSpec(ctx context.Context, yaml []byte) (*openapi3.T, []byte, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(yaml)
	if err != nil {
		return nil, nil, fmt.Errorf("httpapi: load OpenAPI document: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, nil, fmt.Errorf("httpapi: invalid OpenAPI document: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("httpapi: render OpenAPI document: %w", err)
	}
	return doc, append(b, '\n'), nil
}
