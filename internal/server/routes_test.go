package server_test

import (
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
)

// Every route is in the OpenAPI document under the pattern it is registered
// with, so its requests are validated against the document (the validator
// finds the operation by that pattern).
func TestRoutes_AllDocumented(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite)
	if got := s.UndocumentedRoutes(); len(got) != 0 {
		t.Fatalf("routes missing from api/openapi.yaml (or spelled differently): %q", got)
	}
}
