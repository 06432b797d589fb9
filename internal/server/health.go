package server

import (
	"context"
	"net/http"
	"time"

	"github.com/stewardhq/steward/internal/buildinfo"
	"github.com/stewardhq/steward/internal/httpapi"
)

// healthCheck is one dependency the health endpoint checks.
type healthCheck struct {
	name  string
	check func(ctx context.Context) error
}

// healthCheckTimeout bounds each check, so a hung dependency answers 503
// instead of hanging the probe.
const healthCheckTimeout = 2 * time.Second

// handleHealth answers 200 when every check passes and 503 naming the failure
// otherwise (API.md, Health), with the server's build version either way.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	status, code := "ok", http.StatusOK
	checks := make(map[string]string, len(s.checks))
	for _, c := range s.checks {
		ctx, cancel := context.WithTimeout(r.Context(), healthCheckTimeout)
		err := c.check(ctx)
		cancel()
		if err != nil {
			checks[c.name] = err.Error()
			status, code = "unavailable", http.StatusServiceUnavailable
			continue
		}
		checks[c.name] = "ok"
	}
	return httpapi.WriteJSON(w, code, map[string]any{"status": status, "checks": checks,
		"version": buildinfo.Version()})
}
