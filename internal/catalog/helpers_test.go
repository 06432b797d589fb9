package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// devAuth lets every request in, in project "default".
type devAuth struct{}

func (devAuth) Authenticate(context.Context, string) (auth.Principal, error) {
	return auth.Principal{Type: "user", ID: "alice", Role: auth.RoleAdmin}, nil
}

// problems is the slice of internal/server's table these routes answer with.
func problems() httpapi.Problems {
	isInvalid := func(err error) bool { var e *invalid.Error; return errors.As(err, &e) }
	return append(httpapi.BaseProblems(),
		httpapi.Mapping{Match: isInvalid, Status: http.StatusBadRequest, Reason: "INVALID_ARGUMENT", Title: "Invalid argument"},
		httpapi.Mapping{Match: func(err error) bool { var e *invalid.ImmutableError; return errors.As(err, &e) },
			Status: http.StatusBadRequest, Reason: "INVALID_ARGUMENT", Title: "Invalid argument"},
		httpapi.Mapping{Err: store.ErrInvalidPageToken, Status: http.StatusBadRequest, Reason: "INVALID_PAGE_TOKEN", Title: "Invalid page token"},
		httpapi.Mapping{Err: store.ErrStale, Status: http.StatusPreconditionFailed, Reason: "PRECONDITION_FAILED", Title: "Precondition failed"},
		httpapi.Mapping{Err: catalog.ErrServiceTypeNotFound, Status: http.StatusNotFound, Reason: "SERVICE_TYPE_NOT_FOUND", Title: "Service type not found"},
		httpapi.Mapping{Err: catalog.ErrCatalogItemNotFound, Status: http.StatusNotFound, Reason: "CATALOG_ITEM_NOT_FOUND", Title: "Catalog item not found"},
		httpapi.Mapping{Err: catalog.ErrCatalogItemExists, Status: http.StatusConflict, Reason: "CATALOG_ITEM_EXISTS", Title: "Catalog item exists"},
		httpapi.Mapping{Err: catalog.ErrCatalogItemInUse, Status: http.StatusConflict, Reason: "CATALOG_ITEM_IN_USE", Title: "Catalog item in use"},
	)
}

// env is a catalog Service behind the HTTP stack on 127.0.0.1, on a fresh
// database.
type env struct {
	svc *catalog.Service
	srv *httptest.Server
	db  *store.DB
}

func setup(t *testing.T, engine store.Engine) *env {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	db := storetest.Open(t, engine)
	types, err := catalog.NewServiceTypes(db)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{db: db}
	e.svc = catalog.New(catalog.Config{DB: db, ServiceTypes: types, Logger: logger,
		Orders: order.New(order.Config{DB: db, ServiceType: types.OrderType})})
	api, err := httpapi.New(httpapi.Config{Logger: logger, Problems: problems(), Auth: devAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	e.svc.Routes(api)
	e.srv = httptest.NewServer(api)
	t.Cleanup(e.srv.Close)
	return e
}

// response is an answer read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; body is JSON-encoded unless it is a string or nil.
// headers come in name, value pairs.
func (e *env) do(t *testing.T, method, path string, body any, headers ...string) *response {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = bytes.NewReader([]byte(b))
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}
}

// want fails the test unless the status is want, and decodes the body into
// v when v is not nil.
func (r *response) want(t *testing.T, want int, v any) *response {
	t.Helper()
	if r.status != want {
		t.Fatalf("status = %d, want %d; body: %s", r.status, want, r.body)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			t.Fatalf("decode %s: %v", r.body, err)
		}
	}
	return r
}

// problem is the body of an error answer.
type problem struct {
	Status int             `json:"status"`
	Reason string          `json:"reason"`
	Detail string          `json:"detail"`
	Fields []invalid.Field `json:"fields"`
	// Extra holds every member, extensions included.
	Extra map[string]any `json:"-"`
}

// wantProblem fails the test unless the answer is problem+json with the
// status and reason, and returns it.
func (r *response) wantProblem(t *testing.T, status int, reason string) problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; status %d, body %s", ct, r.status, r.body)
	}
	var p problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("decode problem %s: %v", r.body, err)
	}
	if r.status != status || p.Reason != reason {
		t.Fatalf("got %d %s, want %d %s; body: %s", r.status, p.Reason, status, reason, r.body)
	}
	if err := json.Unmarshal(r.body, &p.Extra); err != nil {
		t.Fatal(err)
	}
	return p
}

// itemView is a catalog item as a client reads it.
type itemView struct {
	ID          string           `json:"id"`
	Path        string           `json:"path"`
	DisplayName string           `json:"display_name"`
	ServiceType string           `json:"service_type"`
	Defaults    map[string]any   `json:"defaults"`
	Fields      []map[string]any `json:"fields"`
	CreateTime  string           `json:"create_time"`
	UpdateTime  string           `json:"update_time"`
	ETag        string           `json:"etag"`
}

type itemPage struct {
	Results       []itemView `json:"results"`
	NextPageToken string     `json:"next_page_token"`
}

// smallVM is DCM's catalog item example: vcpu.count editable up to 4.
func smallVM() map[string]any {
	return map[string]any{
		"display_name": "Small Fedora VM",
		"service_type": "vm",
		"defaults":     map[string]any{"memory": map[string]any{"size": "2GB"}, "guest_os": map[string]any{"type": "fedora-39"}},
		"fields": []any{
			map[string]any{"path": "vcpu.count", "display_name": "vCPUs", "editable": true, "default": 2,
				"validation_schema": map[string]any{"maximum": 4}},
			map[string]any{"path": "metadata.name", "editable": true},
		},
	}
}

// setOrders makes the item's orders n live ones and one removed (terminal)
// one, written straight to the orders' table as the lifecycle keeps it: the
// catalog counts them with its own query.
func (e *env) setOrders(t *testing.T, itemID string, n int) {
	t.Helper()
	bind := func(q string) string {
		if e.db.Engine() == store.SQLite {
			return strings.NewReplacer("$1", "?", "$2", "?", "$3", "?").Replace(q)
		}
		return q
	}
	if _, err := e.db.Exec(t.Context(), bind(`DELETE FROM catalog_item_instances WHERE catalog_item_id = $1`), itemID); err != nil {
		t.Fatal(err)
	}
	for i := range n + 1 {
		terminal := i == n
		if _, err := e.db.Exec(t.Context(), bind(`INSERT INTO catalog_item_instances (id, project, catalog_item_id,
			service_type, display_name, labels, user_values, state, lifecycle, version, generation, attributes,
			instance_id, provider_name, status, create_time, update_time, terminal)
			VALUES ($1, 'default', $2, 'vm', '', '{}', '{}', 'up', 'simple', 1, 1, '{}', '', '', 'RUNNING',
			'2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', $3)`), fmt.Sprintf("%s-order-%d", itemID, i), itemID, terminal); err != nil {
			t.Fatal(err)
		}
	}
}
