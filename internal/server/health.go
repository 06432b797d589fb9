package server

import (
	"github.com/stewardhq/steward/api"

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
	checks, ok := s.runChecks(r.Context(), s.checks)
	if !ok {
		status, code = "unavailable", http.StatusServiceUnavailable
	}
	scope, warnings := s.eventsScope()
	return httpapi.WriteJSON(w, code, map[string]any{"status": status, "checks": checks,
		"version": buildinfo.Version(), "api_revision": api.Revision, "events_scope": scope, "warnings": warnings})
}

// eventsScopeWarning is what a server on a shared PostgreSQL with its own
// embedded NATS says, at start and in its health: each replica would have
// its own event bus (issue 22).
const eventsScopeWarning = "events stay inside this replica: the database is PostgreSQL, which other replicas may share, " +
	"but NATS is embedded in this process; give every replica the same --nats-url so that events (status reports, " +
	"order events, adapters' messages) reach all of them"

// eventsScope is how far this server's events reach: "cluster" on an
// external NATS, "replica" on the embedded one; with a warning when that
// matters (PostgreSQL, so other replicas may run beside it). Never nil.
func (s *Server) eventsScope() (scope string, warnings []string) {
	warnings = []string{}
	if s.cfg.NATSURL != "" {
		return "cluster", warnings
	}
	if s.cfg.DatabaseURL != "" {
		warnings = append(warnings, eventsScopeWarning)
	}
	return "replica", warnings
}
