package tokens_test

import (
	"net/http"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
)

// GET /api/v1/whoami tells every authenticated caller who it is: its
// principal, role and the project it acts in; open only on a --dev server.
func TestWhoami_EveryRoleLearnsWhoItIs(t *testing.T) {
	t.Parallel()
	e := setup(t, store.SQLite)
	type caller struct {
		Principal struct{ Type, ID string }
		Role      string
		Project   string
		Provider  string
		Open      bool
	}
	who := func(token string, headers ...string) caller {
		t.Helper()
		var c caller
		e.as(t, token, "GET", "/api/v1/whoami", nil, headers...).Want(t, http.StatusOK).JSON(t, &c)
		return c
	}
	carol := e.token(t, root, map[string]any{"name": "carol", "role": "user", "project": "team-a"})
	vmSP := e.token(t, root, map[string]any{"name": "vm-sp", "role": "service_account", "provider": "vm-sp", "service_types": []string{"vm"}})

	if c := who(carol); c.Principal.Type != "user" || c.Principal.ID != "carol" || c.Role != "user" || c.Project != "team-a" || c.Open {
		t.Errorf("carol: %+v", c)
	}
	if c := who(vmSP, "Steward-Project", "team-b"); c.Principal.Type != "service_account" || c.Role != "service_account" ||
		c.Provider != "vm-sp" || c.Project != "team-b" {
		t.Errorf("vm-sp naming team-b: %+v", c)
	}
	if c := who(root); c.Role != "admin" || c.Project != "default" || c.Open {
		t.Errorf("the root token: %+v", c)
	}
	e.as(t, carol, "GET", "/api/v1/whoami", nil, "Steward-Project", "team-b").WantProblem(t, http.StatusForbidden, "PERMISSION_DENIED")
	e.as(t, "", "GET", "/api/v1/whoami", nil).WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
	e.as(t, "nope", "GET", "/api/v1/whoami", nil).WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
	e.as(t, root, "POST", "/api/v1/whoami", nil).WantProblem(t, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")

	dev := apitest.Start(t, store.SQLite)
	var c caller
	dev.Do(t, "GET", "/api/v1/whoami", nil).Want(t, http.StatusOK).JSON(t, &c)
	if !c.Open || c.Role != "admin" || c.Principal.ID != "dev" {
		t.Errorf("on a --dev server: %+v, want the open dev admin", c)
	}
}
