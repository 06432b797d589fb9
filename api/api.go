// Package api embeds Steward's OpenAPI document, the spec-first HTTP
// contract: the server validates requests against it and serves it at
// GET /api/v1/openapi.json; scripts/test lints it with Spectral.
package api

import _ "embed"

// OpenAPIYAML is the OpenAPI 3 document (openapi.yaml beside this file).
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// Revision counts the changes to the API that a client may depend on: a
// route, a member or a meaning added. The server says its revision in
// GET /api/v1/health (`api_revision`; a server older than revision 1 says
// none), and a client compares it with its own, so that it explains a
// server too old for a command instead of showing a bare 404 or reading
// a header the server does not know (issue 46, item 7). Bump it with any
// such change, and name in the client what needs the new revision.
//
//	1: api_revision itself; every project's lists (Steward-Project: *)
//	   and GET /api/v1/whoami predate it.
//	2: an order read shows its cleanup (what of it is still being removed),
//	   and its log the rehydrate and cleanup events; the CLI's --wait=all
//	   waits on the cleanup (issue 46, item 8).
const Revision = 2
