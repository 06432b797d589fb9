package server

import (
	"context"
	"net/http"

	"github.com/stewardhq/steward/internal/httpapi"
)

// Probe is the answer of /livez and /readyz: "ok" with 200, or
// "unavailable" with 503 naming what failed.
type probe struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// handleLive answers /livez: the process serves HTTP. It checks nothing
// else, so a database outage never gets a replica restarted (that is
// what readiness is for).
func (s *Server) handleLive(w http.ResponseWriter, _ *http.Request) error {
	return httpapi.WriteJSON(w, http.StatusOK, probe{Status: "ok", Checks: map[string]string{}})
}

// handleReady answers /readyz: 200 when this replica should get requests
// (the database and the event bus answer, the schema is the one this build
// needs, and it is not draining), 503 otherwise. Draining is checked first
// and alone: a replica that is stopping says so at once, whatever else.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) error {
	if s.draining.Load() {
		return httpapi.WriteJSON(w, http.StatusServiceUnavailable,
			probe{Status: "unavailable", Checks: map[string]string{"draining": "stopping: finishing the requests in flight"}})
	}
	checks, ok := s.runChecks(r.Context(), s.checks)
	// The schema was migrated (or found current) before the server
	// started, and nothing moves it back while it runs.
	checks["migrations"] = "ok"
	checks["draining"] = "ok"
	status, code := "ok", http.StatusOK
	if !ok {
		status, code = "unavailable", http.StatusServiceUnavailable
	}
	return httpapi.WriteJSON(w, code, probe{Status: status, Checks: checks})
}

// probeHandler serves a probe's answer; a probe that cannot write its
// answer has no one to tell.
func probeHandler(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _ = h(w, r) })
}

// runChecks runs every check, each bounded by healthCheckTimeout, and
// returns each one's "ok" or error message, and whether all passed.
func (s *Server) runChecks(ctx context.Context, checks []healthCheck) (map[string]string, bool) {
	out := make(map[string]string, len(checks)+2)
	ok := true
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, healthCheckTimeout)
		err := c.check(cctx)
		cancel()
		if err != nil {
			out[c.name], ok = err.Error(), false
			continue
		}
		out[c.name] = "ok"
	}
	return out, ok
}
