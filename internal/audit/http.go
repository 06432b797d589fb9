package audit

import (
	"net/http"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
)

// Routes registers the audit log's read route on api. There are no routes
// that change or delete records.
func (s *Service) Routes(api *httpapi.API) {
	api.Handle("GET /api/v1/audit-events", s.handleList)
}

func (s *Service) handleList(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	// Admins read every project's records; a project admin its own
	// (auth.Authorize lets no one else here).
	project := auth.ProjectFrom(r.Context())
	if who, _ := auth.PrincipalFrom(r.Context()); who.Role == auth.RoleAdmin {
		project = ""
	}
	p := ListParams{Project: project, Action: q.Get("action"), Target: q.Get("target"),
		Actor: q.Get("actor"), Page: page}
	var errs invalid.Errors
	if p.Target != "" && !strings.Contains(p.Target, ":") {
		// The path form, as a resource's `path` spells it.
		target, ok := httpapi.AuditTarget(p.Target)
		if !ok {
			errs.Add("target", "must be kind:id (catalog_item_instance:web) or a resource's path (catalog-item-instances/web), not %q", p.Target)
		}
		p.Target = target
	}
	for name, dst := range map[string]*time.Time{"since": &p.Since, "until": &p.Until} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				errs.Add(name, "must be an RFC 3339 time, not %q", v)
			}
			*dst = t
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	records, err := s.List(r.Context(), p)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, records)
}
