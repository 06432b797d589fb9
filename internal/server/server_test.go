package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/stewardhq/steward/internal/buildinfo"
	"github.com/stewardhq/steward/internal/events"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/internal/tokens"
)

type operation struct {
	ID       string         `json:"id"`
	Path     string         `json:"path"`
	Done     bool           `json:"done"`
	Metadata map[string]any `json:"metadata"`
	Error    map[string]any `json:"error"`
	Response map[string]any `json:"response"`
}

type operationPage struct {
	Results       []operation `json:"results"`
	NextPageToken string      `json:"next_page_token"`
}

// startOp records a running operation the way a domain does: in a transaction.
func startOp(t *testing.T, s *apitest.Server, kind, target string) operations.Operation {
	t.Helper()
	var op operations.Operation
	err := s.DB().InTx(context.Background(), func(tx *store.Tx) (err error) {
		op, err = s.Operations().StartTx(context.Background(), tx, operations.StartParams{
			Project: "default", Kind: kind, Target: target, Metadata: map[string]any{"step": 1},
		})
		return err
	})
	if err != nil {
		t.Fatalf("start operation: %v", err)
	}
	return op
}

func TestHealth_ReportsDatabaseAndEvents(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		type health struct {
			Status  string            `json:"status"`
			Checks  map[string]string `json:"checks"`
			Version string            `json:"version"`
		}
		var h health
		s.Do(t, "GET", "/api/v1/health", nil).Want(t, http.StatusOK).JSON(t, &h)
		if h.Status != "ok" || h.Checks["database"] != "ok" || h.Checks["events"] != "ok" {
			t.Fatalf("health = %+v, want ok with database and events ok", h)
		}
		// buildinfo.Version is never empty ("devel" at least), so this also
		// catches a missing member.
		if want := buildinfo.Version(); h.Version != want {
			t.Fatalf("health version = %q, want %q (buildinfo.Version)", h.Version, want)
		}

		// With the event bus gone, health must say so with 503.
		if err := s.Bus().Stop(context.Background()); err != nil {
			t.Fatalf("stop bus: %v", err)
		}
		h = health{}
		s.Do(t, "GET", "/api/v1/health", nil).Want(t, http.StatusServiceUnavailable).JSON(t, &h)
		if h.Status != "unavailable" || h.Checks["events"] == "ok" || h.Checks["database"] != "ok" {
			t.Fatalf("health with NATS down = %+v, want events failing", h)
		}
		if want := buildinfo.Version(); h.Version != want {
			t.Fatalf("health version with NATS down = %q, want %q", h.Version, want)
		}
	})
}

// Issue 28: /readyz says whether the replica should get requests and
// /livez only that it serves. With NATS gone, readiness fails naming the
// events while liveness holds; once stopping, readiness answers draining.
func TestProbes_ReadyFollowsDependenciesLiveDoesNot(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		var p struct {
			Status string            `json:"status"`
			Checks map[string]string `json:"checks"`
		}
		s.Do(t, "GET", "/readyz", nil).Want(t, http.StatusOK).JSON(t, &p)
		for _, c := range []string{"database", "events", "migrations", "draining"} {
			if p.Status != "ok" || p.Checks[c] != "ok" {
				t.Fatalf("readyz = %+v, want ok with %s ok", p, c)
			}
		}
		if err := s.Bus().Stop(context.Background()); err != nil {
			t.Fatalf("stop bus: %v", err)
		}
		s.Do(t, "GET", "/readyz", nil).Want(t, http.StatusServiceUnavailable).JSON(t, &p)
		if p.Status != "unavailable" || p.Checks["events"] == "ok" || p.Checks["database"] != "ok" {
			t.Fatalf("readyz with NATS down = %+v, want unavailable naming events", p)
		}
		s.Do(t, "GET", "/livez", nil).Want(t, http.StatusOK).JSON(t, &p)
		if p.Status != "ok" {
			t.Fatalf("livez with NATS down = %+v, want ok", p)
		}
	})
}

// Issue 28: the embedded NATS server beyond 127.0.0.1 needs a token. A
// server told to listen on every address without one refuses to start,
// naming the flag; with one, its own bus works (health) and a client
// without the token is refused.
func TestServer_EmbeddedNATSBeyondLoopbackNeedsAToken(t *testing.T) {
	t.Parallel()
	s, err := server.New(server.Config{Dev: true, Listen: "127.0.0.1:0", DataDir: t.TempDir(), NATSListen: "0.0.0.0:0"})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Start(t.Context())
	if err == nil {
		_ = s.Stop(context.Background())
		t.Fatal("a server with NATS on every address and no token started")
	}
	if !strings.Contains(err.Error(), "--nats-token-file") {
		t.Errorf("start error %q does not name --nats-token-file", err)
	}

	withToken := apitest.Start(t, store.SQLite, func(c *server.Config) {
		c.NATSListen, c.NATSToken = "127.0.0.1:0", "a-long-token"
	})
	withToken.Do(t, "GET", "/readyz", nil).Want(t, http.StatusOK)
	if nc, err := nats.Connect(withToken.NATSURL(), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Error("a NATS client without the token connected")
	}
	nc, err := nats.Connect(withToken.NATSURL(), nats.Token("a-long-token"), nats.MaxReconnects(0))
	if err != nil {
		t.Fatalf("a NATS client with the token: %v", err)
	}
	nc.Close()
}

func TestServer_RestartKeepsState(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		op := startOp(t, s, "rehydrate", "catalog-item-instances/x")

		// An event committed to the outbox before the restart must reach
		// the stream (NATS keeps it on disk in the data dir).
		got := make(chan string, 10)
		ev, err := events.NewEvent("/steward/test", "dev.steward.test", map[string]string{"op": op.ID})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DB().InTx(context.Background(), func(tx *store.Tx) error {
			return events.PublishTx(context.Background(), tx, "steward.test.restart", ev)
		}); err != nil {
			t.Fatalf("publish: %v", err)
		}

		s = s.Restart(t)
		var after operation
		s.Do(t, "GET", "/api/v1/operations/"+op.ID, nil).Want(t, http.StatusOK).JSON(t, &after)
		if after.ID != op.ID || after.Done || after.Metadata["kind"] != "rehydrate" || after.Metadata["target"] != "catalog-item-instances/x" {
			t.Fatalf("operation after restart = %+v", after)
		}
		stop, err := s.Bus().Subscribe(context.Background(), events.SubscribeParams{
			Subject: "steward.test.>", Durable: "restart-test",
			Handler: func(_ context.Context, e events.Event) error { got <- e.ID(); return nil },
		})
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		defer stop()
		if id := waitFor(t, got); id != ev.ID() {
			t.Fatalf("received event %s, want %s", id, ev.ID())
		}
	})
}

func TestOperations_GetListFilterAndPage(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine)
		var ids []string
		for i := range 7 {
			ids = append(ids, startOp(t, s, "rehydrate", fmt.Sprintf("catalog-item-instances/%d", i)).ID)
		}
		other := startOp(t, s, "delete", "catalog-item-instances/z")
		failed := errors.New("provider said no")
		if err := s.DB().InTx(context.Background(), func(tx *store.Tx) error {
			_, err := s.Operations().FinishTx(context.Background(), tx, other.ID, operations.FinishParams{Err: failed})
			return err
		}); err != nil {
			t.Fatalf("finish: %v", err)
		}

		// Pages of 3 over the 7 rehydrations: every one once, in order.
		var seen []string
		token := ""
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("pagination does not end")
			}
			var p operationPage
			s.Do(t, "GET", "/api/v1/operations?kind=rehydrate&max_page_size=3&page_token="+token, nil).Want(t, http.StatusOK).JSON(t, &p)
			for _, o := range p.Results {
				seen = append(seen, o.ID)
				if o.Path != "operations/"+o.ID {
					t.Errorf("path = %q", o.Path)
				}
			}
			if p.NextPageToken == "" {
				break
			}
			token = p.NextPageToken
		}
		if strings.Join(seen, ",") != strings.Join(ids, ",") {
			t.Fatalf("paged ids = %v, want %v", seen, ids)
		}

		var done operationPage
		s.Do(t, "GET", "/api/v1/operations?done=true", nil).Want(t, http.StatusOK).JSON(t, &done)
		if len(done.Results) != 1 || done.Results[0].ID != other.ID {
			t.Fatalf("done=true = %+v, want only %s", done.Results, other.ID)
		}
		// A failed operation carries its error as a problem (the table maps an
		// unknown error to INTERNAL and hides its text).
		if e := done.Results[0].Error; e["reason"] != "INTERNAL" || e["status"] != float64(500) || strings.Contains(fmt.Sprint(e), "provider said no") {
			t.Fatalf("operation error = %v", e)
		}

		var onOne operationPage
		s.Do(t, "GET", "/api/v1/operations?target=catalog-item-instances/3", nil).Want(t, http.StatusOK).JSON(t, &onOne)
		if len(onOne.Results) != 1 || onOne.Results[0].ID != ids[3] {
			t.Fatalf("target=catalog-item-instances/3 = %+v, want only %s", onOne.Results, ids[3])
		}
		var none operationPage
		s.Do(t, "GET", "/api/v1/operations?target=catalog-item-instances/z&kind=rehydrate", nil).Want(t, http.StatusOK).JSON(t, &none)
		if len(none.Results) != 0 {
			t.Fatalf("target and kind of no operation = %+v, want none", none.Results)
		}

		s.Do(t, "GET", "/api/v1/operations/nope", nil).WantProblem(t, http.StatusNotFound, "OPERATION_NOT_FOUND")
	})
}

func TestAPI_BadRequestsGetProblems(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite)
	cases := []struct {
		name, method, path string
		status             int
		reason             string
	}{
		{"unknown route", "GET", "/api/v1/nothing-here", 404, "NOT_FOUND"},
		{"unknown root", "GET", "/nothing-here", 404, "NOT_FOUND"},
		{"wrong method", "DELETE", "/api/v1/operations", 405, "METHOD_NOT_ALLOWED"},
		{"negative page size", "GET", "/api/v1/operations?max_page_size=-1", 400, "INVALID_ARGUMENT"},
		{"non-numeric page size", "GET", "/api/v1/operations?max_page_size=ten", 400, "INVALID_ARGUMENT"},
		{"page size too big is coerced", "GET", "/api/v1/operations?max_page_size=5000", 200, ""},
		{"bad page token", "GET", "/api/v1/operations?page_token=not-a-token", 400, "INVALID_PAGE_TOKEN"},
		{"bad boolean filter", "GET", "/api/v1/operations?done=perhaps", 400, "INVALID_ARGUMENT"},
		{"unknown verb", "POST", "/api/v1/operations/x:frobnicate", 404, "NOT_FOUND"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Do(t, tc.method, tc.path, nil, "X-Request-Id", "req-"+strings.ReplaceAll(tc.name, " ", "-"))
			if tc.status == 200 {
				r.Want(t, 200)
				return
			}
			p := r.WantProblem(t, tc.status, tc.reason)
			if want := "urn:steward:request:req-" + strings.ReplaceAll(tc.name, " ", "-"); p.Instance != want {
				t.Errorf("instance = %q, want the request id %q", p.Instance, want)
			}
			if tc.status == 405 && r.Header.Get("Allow") == "" {
				t.Error("405 without an Allow header")
			}
		})
	}
}

func TestAPI_RequiresBearerTokenOutsideDev(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.Dev = false; c.APIToken = "s3cret" })
	s.Do(t, "GET", "/api/v1/operations", nil).WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
	s.Do(t, "GET", "/api/v1/operations", nil, "Authorization", "Bearer wrong").WantProblem(t, http.StatusUnauthorized, "UNAUTHENTICATED")
	s.Do(t, "GET", "/api/v1/operations", nil, "Authorization", "Bearer s3cret").Want(t, http.StatusOK)
	// Probes and the contract stay open.
	s.Do(t, "GET", "/api/v1/health", nil).Want(t, http.StatusOK)
	s.Do(t, "GET", "/api/v1/openapi.json", nil).Want(t, http.StatusOK)

	// Without --dev, a static token or an admin token in the store, no one
	// could get in: the server refuses to start and says how to make one.
	dir := t.TempDir()
	srv, err := server.New(server.Config{DataDir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "steward token create") {
		t.Fatalf("a server without --dev and without any admin token: Start = %v; want a refusal naming steward token create", err)
	}
	if _, err := server.CreateToken(t.Context(), server.CreateTokenConfig{DataDir: dir, Role: "admin",
		Token: tokens.CreateParams{Name: "ops"}}); err != nil {
		t.Fatal(err)
	}
	srv, err = server.New(server.Config{DataDir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(t.Context()); err != nil {
		t.Fatalf("with an admin token in the store: Start = %v", err)
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestMetrics_CountRequestsByRoute(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite)
	for range 3 {
		s.Do(t, "GET", "/api/v1/operations/abc", nil)
	}
	body := string(s.Do(t, "GET", "/metrics", nil).Want(t, 200).Body)
	want := `steward_http_requests_total{code="404",method="GET",route="/api/v1/operations/{operation_id}"} 3`
	if !strings.Contains(body, want) {
		t.Fatalf("metrics lack %q", want)
	}
}

func TestOpenAPI_DocumentsEveryServedRoute(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	s.Do(t, "GET", "/api/v1/openapi.json", nil).Want(t, 200).JSON(t, &doc)
	if len(doc.Paths) == 0 {
		t.Fatal("document has no paths")
	}
	// Every documented operation is served: none answers the router's own
	// NOT_FOUND or METHOD_NOT_ALLOWED.
	for path, ops := range doc.Paths {
		for method := range ops {
			m := strings.ToUpper(method)
			if m == "PARAMETERS" {
				continue
			}
			url := strings.NewReplacer("{operation_id}", "x").Replace(path)
			r := s.Do(t, m, url, nil)
			if r.Status == 405 || (r.Status == 404 && strings.Contains(string(r.Body), `"NOT_FOUND"`)) {
				t.Errorf("%s %s is documented but not served (%d)", m, path, r.Status)
			}
		}
	}
}

func waitFor[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-t.Context().Done():
		t.Fatal("test ended while waiting")
	case <-deadline(t):
		t.Fatal("timed out waiting")
	}
	var zero T
	return zero
}
