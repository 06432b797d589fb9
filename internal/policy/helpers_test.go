package policy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/policy"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// problems is the slice of internal/server's table this package needs (the
// entries to add there are the policy ones).
func problems() httpapi.Problems {
	return append(httpapi.BaseProblems(),
		httpapi.Mapping{Match: func(err error) bool { var e *invalid.Error; return errors.As(err, &e) },
			Status: http.StatusBadRequest, Reason: "INVALID_ARGUMENT", Title: "Invalid argument"},
		httpapi.Mapping{Match: func(err error) bool { var e *invalid.ImmutableError; return errors.As(err, &e) },
			Status: http.StatusBadRequest, Reason: "INVALID_ARGUMENT", Title: "Invalid argument"},
		httpapi.Mapping{Err: store.ErrStale, Status: http.StatusPreconditionFailed, Reason: "PRECONDITION_FAILED", Title: "Precondition failed"},
		httpapi.Mapping{Err: policy.ErrPolicyNotFound, Status: http.StatusNotFound, Reason: "POLICY_NOT_FOUND", Title: "Policy not found"},
		httpapi.Mapping{Err: policy.ErrPolicyExists, Status: http.StatusConflict, Reason: "POLICY_ALREADY_EXISTS", Title: "Policy already exists"},
		httpapi.Mapping{Err: policy.ErrInvalidPolicy, Status: http.StatusBadRequest, Reason: "INVALID_POLICY", Title: "Invalid policy"},
		httpapi.Mapping{Err: policy.ErrRejected, Status: http.StatusNotAcceptable, Reason: "POLICY_REJECTED", Title: "Rejected by policy"},
		httpapi.Mapping{Err: policy.ErrConflict, Status: http.StatusConflict, Reason: "POLICY_CONFLICT", Title: "Policy conflict"},
		httpapi.Mapping{Err: policy.ErrEvaluation, Status: http.StatusInternalServerError, Reason: "POLICY_EVALUATION_FAILED", Title: "Policy evaluation failed"},
		httpapi.Mapping{Err: policy.ErrNoProvider, Status: http.StatusServiceUnavailable, Reason: "NO_PROVIDER_AVAILABLE", Title: "No provider available"},
	)
}

type devAuth struct{}

func (devAuth) Authenticate(context.Context, string) (auth.Principal, error) {
	return auth.Principal{Type: "user", ID: "dev", Role: auth.RoleAdmin}, nil
}

// fakeProviders is the registry evaluateRequest reads; tests change it.
type fakeProviders struct {
	mu   sync.Mutex
	list []policy.ProviderInfo
}

func (f *fakeProviders) AvailableProviders(context.Context) ([]policy.ProviderInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]policy.ProviderInfo(nil), f.list...), nil
}

func (f *fakeProviders) set(ps ...policy.ProviderInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = ps
}

// env is one replica: a Service on a database, served over HTTP.
type env struct {
	svc       *policy.Service
	providers *fakeProviders
	url       string
}

// setup starts a replica on a fresh database of engine.
func setup(t *testing.T, engine store.Engine) env {
	t.Helper()
	return startReplica(t, storetest.Config(t, engine), nil)
}

// startReplica starts a replica on the database cfg names; adjust may
// change its Config.
func startReplica(t *testing.T, cfg store.Config, adjust func(*policy.Config)) env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	providers := &fakeProviders{}
	pc := policy.Config{DB: db, Providers: providers, Logger: logger}
	if adjust != nil {
		adjust(&pc)
	}
	svc := policy.New(pc)
	if err := svc.Start(ctx); err != nil {
		t.Fatalf("start policy service: %v", err)
	}
	t.Cleanup(func() {
		if err := svc.Stop(context.Background()); err != nil {
			t.Errorf("stop policy service: %v", err)
		}
	})
	api, err := httpapi.New(httpapi.Config{Logger: logger, Problems: problems(), Auth: devAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	svc.Routes(api)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return env{svc: svc, providers: providers, url: srv.URL}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with a JSON body (nil for none); headers come in pairs.
func (e env) do(t *testing.T, method, path string, body any, headers ...string) *response {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
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

func (r *response) want(t *testing.T, status int) *response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body: %s", r.status, status, r.body)
	}
	return r
}

func (r *response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// problem fails unless the answer is problem+json with status and reason,
// and returns its members.
func (r *response) problem(t *testing.T, status int, reason string) map[string]any {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want problem+json; status %d, body %s", ct, r.status, r.body)
	}
	var p map[string]any
	r.json(t, &p)
	if r.status != status || p["reason"] != reason {
		t.Fatalf("got %d %v, want %d %s; body: %s", r.status, p["reason"], status, reason, r.body)
	}
	return p
}

type policyView struct {
	ID            string            `json:"id"`
	Path          string            `json:"path"`
	DisplayName   string            `json:"display_name"`
	PolicyType    string            `json:"policy_type"`
	Priority      int               `json:"priority"`
	LabelSelector map[string]string `json:"label_selector"`
	RegoCode      string            `json:"rego_code"`
	Enabled       bool              `json:"enabled"`
	ETag          string            `json:"etag"`
	CreateTime    time.Time         `json:"create_time"`
	UpdateTime    time.Time         `json:"update_time"`
}

type evaluation struct {
	EvaluatedServiceInstance struct {
		Spec map[string]any `json:"spec"`
	} `json:"evaluated_service_instance"`
	SelectedProvider string   `json:"selected_provider"`
	Status           string   `json:"status"`
	AppliedPolicies  []string `json:"applied_policies"`
}

// create posts a policy and returns it.
func (e env) create(t *testing.T, id string, body map[string]any) policyView {
	t.Helper()
	var p policyView
	e.do(t, "POST", "/api/v1/policies?id="+id, body).want(t, http.StatusCreated).json(t, &p)
	return p
}

// evaluate posts spec to evaluateRequest and expects 200.
func (e env) evaluate(t *testing.T, spec map[string]any) evaluation {
	t.Helper()
	var ev evaluation
	e.do(t, "POST", "/api/v1/policies:evaluateRequest", map[string]any{"service_instance": map[string]any{"spec": spec}}).
		want(t, http.StatusOK).json(t, &ev)
	return ev
}

// patchSize is a policy that sets spec.size.
func patchSize(name, typ string, priority int, pkg, size string) map[string]any {
	return map[string]any{
		"display_name": name, "policy_type": typ, "priority": priority,
		"rego_code": "package " + pkg + "\n\nmain := {\"patch\": {\"size\": \"" + size + "\"}}\n",
	}
}

func vmSpec() map[string]any {
	return map[string]any{"service_type": "vm", "vcpu": map[string]any{"count": 2}}
}
