package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/pkg/provider"
)

// stubProvider answers by id: get "missing" → ErrNotFound, else RUNNING;
// delete "missing" → ErrNotFound, "done" → DELETED, else DELETING. A set
// func field replaces its method.
type stubProvider struct {
	createFunc func(context.Context, provider.CreateRequest) (provider.Instance, error)
	healthFunc func(context.Context) error
}

func (p *stubProvider) Create(ctx context.Context, req provider.CreateRequest) (provider.Instance, error) {
	if p.createFunc != nil {
		return p.createFunc(ctx, req)
	}
	return provider.Instance{InstanceID: req.InstanceID, Status: provider.StatusProvisioning}, nil
}

func (p *stubProvider) Get(_ context.Context, id string) (provider.Instance, error) {
	if id == "missing" {
		return provider.Instance{}, provider.ErrNotFound
	}
	return provider.Instance{InstanceID: id, Status: provider.StatusRunning}, nil
}

func (p *stubProvider) Delete(_ context.Context, id string) (provider.Instance, error) {
	switch id {
	case "missing":
		return provider.Instance{}, fmt.Errorf("look up %q: %w", id, provider.ErrNotFound)
	case "done":
		return provider.Instance{InstanceID: id, Status: provider.StatusDeleted}, nil
	}
	return provider.Instance{InstanceID: id, Status: provider.StatusDeleting}, nil
}

func (p *stubProvider) Health(ctx context.Context) error {
	if p.healthFunc != nil {
		return p.healthFunc(ctx)
	}
	return nil
}

// updatingStub is a stubProvider that also updates: "missing" →
// ErrNotFound, else PROVISIONING. A set updateFunc replaces Update.
type updatingStub struct {
	stubProvider
	updateFunc func(context.Context, provider.UpdateRequest) (provider.Instance, error)
}

func (p *updatingStub) Update(ctx context.Context, req provider.UpdateRequest) (provider.Instance, error) {
	if p.updateFunc != nil {
		return p.updateFunc(ctx, req)
	}
	if req.InstanceID == "missing" {
		return provider.Instance{}, provider.ErrNotFound
	}
	return provider.Instance{InstanceID: req.InstanceID, Status: provider.StatusProvisioning}, nil
}

// serve runs NewServer(p) on 127.0.0.1 until the test ends.
func serve(t *testing.T, p provider.Provider, cfg provider.ServerConfig) string {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	srv := httptest.NewServer(provider.NewServer(p, cfg))
	t.Cleanup(srv.Close)
	return srv.URL
}

type answer struct {
	status int
	header http.Header
	body   string
}

// send makes one request; headers are name, value pairs.
func send(t *testing.T, method, url, body string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// problemOf decodes a problem+json answer, failing t if it is not one with
// the answer's status.
func problemOf(t *testing.T, a answer) provider.Problem {
	t.Helper()
	if ct := a.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; body %s", ct, a.body)
	}
	var p provider.Problem
	if err := json.Unmarshal([]byte(a.body), &p); err != nil {
		t.Fatalf("decode problem %s: %v", a.body, err)
	}
	if p.Status != a.status || p.Type == "" || p.Title == "" {
		t.Errorf("problem %+v: want status %d, a type and a title", p, a.status)
	}
	return p
}

func TestServer_Routes(t *testing.T) {
	t.Parallel()
	url := serve(t, &stubProvider{}, provider.ServerConfig{})
	updatingURL := serve(t, &updatingStub{}, provider.ServerConfig{})
	create := `{"instance_id":"i-1","service_type":"vm","spec":{"vcpu":2}}`
	update := `{"service_type":"vm","spec":{"vcpu":4}}`

	tests := []struct {
		name, method, path, body string
		headers                  []string
		// updating sends the request to a Provider that implements Updater.
		updating   bool
		wantStatus int
		// wantBody is the JSON answer; wantReason the problem's reason.
		wantBody, wantReason, wantAllow string
		reason                          string
	}{
		{name: "Create", method: "POST", path: "/api/v1/services", body: create, headers: []string{"Content-Type", "application/json", "Idempotency-Key", "i-1"},
			wantStatus: 201, wantBody: `{"instance_id":"i-1","status":"PROVISIONING"}`, reason: "a create answers 201 with the instance"},
		{name: "CreateWithoutContentType", method: "POST", path: "/api/v1/services", body: create,
			wantStatus: 201, wantBody: `{"instance_id":"i-1","status":"PROVISIONING"}`, reason: "Content-Type may be left out"},
		{name: "CreateWithoutInstanceID", method: "POST", path: "/api/v1/services", body: `{"service_type":"vm"}`,
			wantStatus: 400, wantReason: "INVALID_ARGUMENT", reason: "instance_id is required"},
		{name: "CreateWithoutServiceType", method: "POST", path: "/api/v1/services", body: `{"instance_id":"i-1"}`,
			wantStatus: 400, wantReason: "INVALID_ARGUMENT", reason: "service_type is required"},
		{name: "CreateWrongType", method: "POST", path: "/api/v1/services", body: `{"instance_id":5,"service_type":"vm"}`,
			wantStatus: 400, wantReason: "INVALID_ARGUMENT", reason: "a wrong type is a 400 naming the field"},
		{name: "CreateMalformed", method: "POST", path: "/api/v1/services", body: `{"instance_id":`,
			wantStatus: 400, wantReason: "MALFORMED_JSON", reason: "broken JSON is a 400"},
		{name: "CreateEmpty", method: "POST", path: "/api/v1/services",
			wantStatus: 400, wantReason: "MALFORMED_JSON", reason: "an empty body is a 400"},
		{name: "CreateTwoValues", method: "POST", path: "/api/v1/services", body: create + create,
			wantStatus: 400, wantReason: "MALFORMED_JSON", reason: "one JSON value only"},
		{name: "CreateTooLarge", method: "POST", path: "/api/v1/services",
			body:       `{"instance_id":"i-1","service_type":"vm","spec":{"x":"` + strings.Repeat("a", 1<<20) + `"}}`,
			wantStatus: 413, wantReason: "BODY_TOO_LARGE", reason: "bodies over 1 MiB are a 413"},
		{name: "CreateNotJSON", method: "POST", path: "/api/v1/services", body: create, headers: []string{"Content-Type", "text/plain"},
			wantStatus: 415, wantReason: "UNSUPPORTED_MEDIA_TYPE", reason: "a body must be JSON"},
		{name: "Get", method: "GET", path: "/api/v1/services/i-1",
			wantStatus: 200, wantBody: `{"instance_id":"i-1","status":"RUNNING"}`, reason: "get answers the instance"},
		{name: "GetEscapedID", method: "GET", path: "/api/v1/services/a%20b",
			wantStatus: 200, wantBody: `{"instance_id":"a b","status":"RUNNING"}`, reason: "the id is unescaped from the path"},
		{name: "GetMissing", method: "GET", path: "/api/v1/services/missing",
			wantStatus: 404, wantReason: "INSTANCE_NOT_FOUND", reason: "ErrNotFound is a 404"},
		{name: "DeleteInProgress", method: "DELETE", path: "/api/v1/services/i-1",
			wantStatus: 202, wantBody: `{"instance_id":"i-1","status":"DELETING"}`, reason: "a deletion under way answers 202"},
		{name: "DeleteDone", method: "DELETE", path: "/api/v1/services/done",
			wantStatus: 200, wantBody: `{"instance_id":"done","status":"DELETED"}`, reason: "a finished deletion answers 200"},
		{name: "DeleteMissing", method: "DELETE", path: "/api/v1/services/missing",
			wantStatus: 404, wantReason: "INSTANCE_NOT_FOUND", reason: "a wrapped ErrNotFound is a 404: already gone"},
		{name: "Health", method: "GET", path: "/api/v1/health",
			wantStatus: 200, wantBody: `{"status":"healthy"}`, reason: "a healthy provider says so"},
		{name: "UnknownPath", method: "GET", path: "/api/v1/nothing",
			wantStatus: 404, wantReason: "NOT_FOUND", reason: "an unknown path is a problem too"},
		{name: "NestedPath", method: "GET", path: "/api/v1/services/a/b",
			wantStatus: 404, wantReason: "NOT_FOUND", reason: "an instance id has no slash"},
		{name: "UpdateNotServed", method: "PUT", path: "/api/v1/services/i-1", body: `{}`,
			wantStatus: 405, wantReason: "METHOD_NOT_ALLOWED", wantAllow: "GET, DELETE", reason: "update is optional and not served"},
		{name: "ListNotServed", method: "GET", path: "/api/v1/services",
			wantStatus: 405, wantReason: "METHOD_NOT_ALLOWED", wantAllow: "POST", reason: "the collection only creates"},
		{name: "Update", method: "PUT", path: "/api/v1/services/i-1", body: update, headers: []string{"Content-Type", "application/json"}, updating: true,
			wantStatus: 200, wantBody: `{"instance_id":"i-1","status":"PROVISIONING"}`, reason: "an Updater's update answers 200 with the instance"},
		{name: "UpdateMissing", method: "PUT", path: "/api/v1/services/missing", body: update, updating: true,
			wantStatus: 404, wantReason: "INSTANCE_NOT_FOUND", reason: "updating an unknown instance is a 404"},
		{name: "UpdateWithoutServiceType", method: "PUT", path: "/api/v1/services/i-1", body: `{"spec":{}}`, updating: true,
			wantStatus: 400, wantReason: "INVALID_ARGUMENT", reason: "service_type is required"},
		{name: "UpdateMalformed", method: "PUT", path: "/api/v1/services/i-1", body: `{"spec":`, updating: true,
			wantStatus: 400, wantReason: "MALFORMED_JSON", reason: "broken JSON is a 400"},
		{name: "UpdateNotJSON", method: "PUT", path: "/api/v1/services/i-1", body: update, headers: []string{"Content-Type", "text/plain"}, updating: true,
			wantStatus: 415, wantReason: "UNSUPPORTED_MEDIA_TYPE", reason: "an update body must be JSON"},
		{name: "UpdaterAllowsPut", method: "POST", path: "/api/v1/services/i-1", body: update, updating: true,
			wantStatus: 405, wantReason: "METHOD_NOT_ALLOWED", wantAllow: "GET, DELETE, PUT", reason: "an Updater's instance path lists PUT"},
		{name: "UpdaterStillGets", method: "GET", path: "/api/v1/services/i-1", updating: true,
			wantStatus: 200, wantBody: `{"instance_id":"i-1","status":"RUNNING"}`, reason: "an Updater serves get as before"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := url
			if tc.updating {
				base = updatingURL
			}
			a := send(t, tc.method, base+tc.path, tc.body, tc.headers...)
			if a.status != tc.wantStatus {
				t.Fatalf("%s\nstatus = %d, want %d; body %s", tc.reason, a.status, tc.wantStatus, a.body)
			}
			if tc.wantBody != "" {
				if diff := cmp.Diff(tc.wantBody, strings.TrimSpace(a.body)); diff != "" {
					t.Errorf("%s\nbody: -want +got:\n%s", tc.reason, diff)
				}
				if ct := a.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q, want application/json", ct)
				}
			}
			if tc.wantReason != "" {
				if p := problemOf(t, a); p.Reason != tc.wantReason {
					t.Errorf("%s\nreason = %q, want %q", tc.reason, p.Reason, tc.wantReason)
				}
			}
			if got := a.header.Get("Allow"); got != tc.wantAllow {
				t.Errorf("%s\nAllow = %q, want %q", tc.reason, got, tc.wantAllow)
			}
		})
	}
}

// unavailableError sets its status through HTTPStatus only.
type unavailableError struct{}

func (unavailableError) Error() string   { return "backend is busy" }
func (unavailableError) HTTPStatus() int { return http.StatusServiceUnavailable }

// okStatusError claims a 2xx status, which an error cannot have.
type okStatusError struct{}

func (okStatusError) Error() string   { return "odd" }
func (okStatusError) HTTPStatus() int { return http.StatusOK }

func TestServer_ProviderErrorsAreProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		create     func(context.Context, provider.CreateRequest) (provider.Instance, error)
		wantStatus int
		wantReason string
		wantDetail string
		reason     string
	}{
		{name: "HTTPError", create: fail(&provider.HTTPError{Code: 409, Reason: "QUOTA_EXCEEDED", Message: "no room left"}),
			wantStatus: 409, wantReason: "QUOTA_EXCEEDED", wantDetail: "no room left", reason: "an HTTPError chooses status and reason"},
		{name: "HTTPErrorWithoutReason", create: fail(&provider.HTTPError{Code: 422, Message: "bad spec"}),
			wantStatus: 422, wantReason: "UNPROCESSABLE_ENTITY", wantDetail: "bad spec", reason: "the reason defaults to the status text"},
		{name: "WrappedHTTPStatus", create: fail(fmt.Errorf("reserve: %w", unavailableError{})),
			wantStatus: 503, wantReason: "SERVICE_UNAVAILABLE", wantDetail: "reserve: backend is busy", reason: "any error with HTTPStatus, wrapped, sets the status"},
		{name: "NotAnErrorStatus", create: fail(okStatusError{}),
			wantStatus: 500, wantReason: "INTERNAL", wantDetail: "odd", reason: "an HTTPStatus outside 4xx and 5xx is ignored"},
		{name: "PlainError", create: fail(errors.New("hypervisor exploded")),
			wantStatus: 500, wantReason: "INTERNAL", wantDetail: "hypervisor exploded", reason: "other errors are a 500 keeping the provider's message"},
		{name: "NotFound", create: fail(provider.ErrNotFound),
			wantStatus: 404, wantReason: "INSTANCE_NOT_FOUND", wantDetail: provider.ErrNotFound.Error(), reason: "ErrNotFound is a 404 from any method"},
		{name: "Panic", create: func(context.Context, provider.CreateRequest) (provider.Instance, error) { panic("boom") },
			wantStatus: 500, wantReason: "INTERNAL", wantDetail: "provider panicked: boom", reason: "a panic is a 500, not a dropped connection"},
		{name: "InvalidStatus", create: func(_ context.Context, req provider.CreateRequest) (provider.Instance, error) {
			return provider.Instance{InstanceID: req.InstanceID, Status: "SPINNING"}, nil
		}, wantStatus: 500, wantReason: "INTERNAL", wantDetail: `provider returned instance "i-1" with invalid status "SPINNING"`, reason: "a status outside the contract is never answered"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := serve(t, &stubProvider{createFunc: tc.create}, provider.ServerConfig{})
			a := send(t, "POST", url+"/api/v1/services", `{"instance_id":"i-1","service_type":"vm"}`)
			if a.status != tc.wantStatus {
				t.Fatalf("%s\nstatus = %d, want %d; body %s", tc.reason, a.status, tc.wantStatus, a.body)
			}
			p := problemOf(t, a)
			want := provider.Problem{
				Type:   "https://steward.dev/problems/" + strings.ToLower(strings.ReplaceAll(tc.wantReason, "_", "-")),
				Title:  http.StatusText(tc.wantStatus),
				Status: tc.wantStatus,
				Detail: tc.wantDetail,
				Reason: tc.wantReason,
			}
			if diff := cmp.Diff(want, p); diff != "" {
				t.Errorf("%s\nproblem: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func fail(err error) func(context.Context, provider.CreateRequest) (provider.Instance, error) {
	return func(context.Context, provider.CreateRequest) (provider.Instance, error) {
		return provider.Instance{}, err
	}
}

func TestServer_UnhealthyBackendAnswers200(t *testing.T) {
	t.Parallel()
	url := serve(t, &stubProvider{healthFunc: func(context.Context) error { return errors.New("libvirt down") }}, provider.ServerConfig{})
	a := send(t, "GET", url+"/api/v1/health", "")
	if a.status != http.StatusOK {
		t.Fatalf("status = %d, want 200 (reachable, backend down); body %s", a.status, a.body)
	}
	if diff := cmp.Diff(`{"status":"unhealthy","message":"libvirt down"}`, strings.TrimSpace(a.body)); diff != "" {
		t.Errorf("body: -want +got:\n%s", diff)
	}
}

func TestServer_Token(t *testing.T) {
	t.Parallel()
	url := serve(t, &stubProvider{}, provider.ServerConfig{Token: "s3cret"})
	tests := []struct {
		name       string
		headers    []string
		wantStatus int
	}{
		{name: "Missing", wantStatus: 401},
		{name: "Wrong", headers: []string{"Authorization", "Bearer guess"}, wantStatus: 401},
		{name: "NotBearer", headers: []string{"Authorization", "Basic s3cret"}, wantStatus: 401},
		{name: "Right", headers: []string{"Authorization", "Bearer s3cret"}, wantStatus: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := send(t, "GET", url+"/api/v1/health", "", tc.headers...)
			if a.status != tc.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", a.status, tc.wantStatus, a.body)
			}
			if tc.wantStatus == 401 {
				if p := problemOf(t, a); p.Reason != "UNAUTHENTICATED" {
					t.Errorf("reason = %q, want UNAUTHENTICATED", p.Reason)
				}
				if a.header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
			}
		})
	}
}

func TestServer_PassesTheRequest(t *testing.T) {
	t.Parallel()
	got := make(chan provider.CreateRequest, 1)
	url := serve(t, &stubProvider{createFunc: func(_ context.Context, req provider.CreateRequest) (provider.Instance, error) {
		got <- req
		return provider.Instance{Status: provider.StatusProvisioning}, nil // id left out
	}}, provider.ServerConfig{})
	a := send(t, "POST", url+"/api/v1/services",
		`{"instance_id":"i-1","service_type":"vm","spec":{"vcpu":2},"metadata":{"order_id":"o-1","project":"p","labels":{"env":"dev"}},"extra":true}`)
	if a.status != http.StatusCreated {
		t.Fatalf("status = %d; body %s", a.status, a.body)
	}
	want := provider.CreateRequest{
		InstanceID: "i-1", ServiceType: "vm", Spec: map[string]any{"vcpu": float64(2)},
		Metadata: provider.CreateMetadata{OrderID: "o-1", Project: "p", Labels: map[string]string{"env": "dev"}},
	}
	if diff := cmp.Diff(want, <-got); diff != "" {
		t.Errorf("request: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(`{"instance_id":"i-1","status":"PROVISIONING"}`, strings.TrimSpace(a.body)); diff != "" {
		t.Errorf("the server fills the id a provider leaves out: -want +got:\n%s", diff)
	}
}

func TestServer_UpdatePassesTheRequest(t *testing.T) {
	t.Parallel()
	got := make(chan provider.UpdateRequest, 1)
	url := serve(t, &updatingStub{updateFunc: func(_ context.Context, req provider.UpdateRequest) (provider.Instance, error) {
		got <- req
		return provider.Instance{Status: provider.StatusProvisioning}, nil // id left out
	}}, provider.ServerConfig{})
	a := send(t, "PUT", url+"/api/v1/services/a%20b", `{"instance_id":"other","service_type":"vm","spec":{"vcpu":4}}`)
	if a.status != http.StatusOK {
		t.Fatalf("status = %d; body %s", a.status, a.body)
	}
	want := provider.UpdateRequest{InstanceID: "a b", ServiceType: "vm", Spec: map[string]any{"vcpu": float64(4)}}
	if diff := cmp.Diff(want, <-got); diff != "" {
		t.Errorf("the instance id is the path's, never the body's: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(`{"instance_id":"a b","status":"PROVISIONING"}`, strings.TrimSpace(a.body)); diff != "" {
		t.Errorf("the server fills the id a provider leaves out: -want +got:\n%s", diff)
	}
}

func TestServer_UpdateRefusalIsAProblem(t *testing.T) {
	t.Parallel()
	url := serve(t, &updatingStub{updateFunc: func(context.Context, provider.UpdateRequest) (provider.Instance, error) {
		return provider.Instance{}, &provider.HTTPError{Code: 422, Reason: "SPEC_NOT_UPDATABLE", Message: "vcpu cannot shrink"}
	}}, provider.ServerConfig{})
	a := send(t, "PUT", url+"/api/v1/services/i-1", `{"service_type":"vm","spec":{"vcpu":1}}`)
	if a.status != http.StatusUnprocessableEntity {
		t.Fatalf("status = %d, want 422; body %s", a.status, a.body)
	}
	if p := problemOf(t, a); p.Reason != "SPEC_NOT_UPDATABLE" || p.Detail != "vcpu cannot shrink" {
		t.Errorf("problem = %+v, want the provider's reason and detail", p)
	}
}
