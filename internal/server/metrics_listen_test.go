package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
)

// Issue 45: with --metrics-listen, /metrics is served on that listener
// only (Steward's metrics, counting the API's requests) and the API's
// listener answers it 404; the metrics listener serves nothing else, and
// stops with the server.
func TestMetrics_OnAListenerOfTheirOwn(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.MetricsListen = "127.0.0.1:0" })
	if s.MetricsURL() == "" || s.MetricsURL() == s.URL() {
		t.Fatalf("metrics URL %q beside the API's %q: want a listener of its own", s.MetricsURL(), s.URL())
	}
	s.Do(t, "GET", "/api/v1/operations/abc", nil)
	s.Do(t, "GET", "/metrics", nil).Want(t, http.StatusNotFound)

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(s.MetricsURL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := get("/metrics")
	want := `steward_http_requests_total{code="404",method="GET",route="/api/v1/operations/{operation_id}"} 1`
	if status != http.StatusOK || !strings.Contains(body, want) || !strings.Contains(body, "go_goroutines") {
		t.Errorf("the metrics listener's /metrics: %d, want 200 with %q", status, want)
	}
	if status, _ := get("/api/v1/health"); status != http.StatusNotFound {
		t.Errorf("the metrics listener's /api/v1/health: %d, want 404", status)
	}

	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(s.MetricsURL() + "/metrics"); err == nil {
		resp.Body.Close()
		t.Errorf("the metrics listener still answers after Stop: %d", resp.StatusCode)
	}
}
