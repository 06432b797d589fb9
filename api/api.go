// Package api embeds Steward's OpenAPI document, the spec-first HTTP
// contract: the server validates requests against it and serves it at
// GET /api/v1/openapi.json; scripts/test lints it with Spectral.
package api

import _ "embed"

// OpenAPIYAML is the OpenAPI 3 document (openapi.yaml beside this file).
//
//go:embed openapi.yaml
var OpenAPIYAML []byte
