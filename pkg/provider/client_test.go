package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/pkg/provider"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

func vmRequest(id string) provider.CreateRequest {
	return provider.CreateRequest{InstanceID: id, ServiceType: "vm", Spec: map[string]any{"vcpu": float64(2)}}
}

// The ways a call can fail, as wantOnly names them.
const (
	isResponseError   = "ResponseError"
	isTimeout         = "ErrTimeout"
	isUnreachable     = "ErrUnreachable"
	isInvalidResponse = "ErrInvalidResponse"
	isCanceled        = "context.Canceled"
)

// wantOnly fails t unless err is of the kind want and of no other, so a test
// shows that a caller can tell them apart.
func wantOnly(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %s", want)
	}
	var re *provider.ResponseError
	kinds := map[string]bool{
		isResponseError:   errors.As(err, &re),
		isTimeout:         errors.Is(err, provider.ErrTimeout),
		isUnreachable:     errors.Is(err, provider.ErrUnreachable),
		isInvalidResponse: errors.Is(err, provider.ErrInvalidResponse),
		isCanceled:        errors.Is(err, context.Canceled),
	}
	for kind, is := range kinds {
		if is != (kind == want) {
			t.Errorf("err %q: %s = %v, want %v", err, kind, is, kind == want)
		}
	}
}

func TestClient_CreateSendsIdempotencyKeyAndToken(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t, func(c *providertest.Config) { c.Token = "s3cret" })
	c := provider.NewClient(provider.ClientConfig{Token: "s3cret"})

	for range 2 { // a replay creates nothing new
		inst, err := c.Create(t.Context(), sp.URL(), vmRequest("i-1"))
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		if diff := cmp.Diff(provider.Instance{InstanceID: "i-1", Status: provider.StatusProvisioning}, inst); diff != "" {
			t.Errorf("instance: -want +got:\n%s", diff)
		}
	}
	want := providertest.Call{Method: providertest.MethodCreate, InstanceID: "i-1", ServiceType: "vm",
		Spec: map[string]any{"vcpu": float64(2)}, IdempotencyKey: "i-1"}
	if diff := cmp.Diff([]providertest.Call{want, want}, sp.Creates()); diff != "" {
		t.Errorf("creates: -want +got:\n%s", diff)
	}
	if n := len(sp.Instances()); n != 1 {
		t.Errorf("provider holds %d instances, want 1", n)
	}

	got, err := c.Get(t.Context(), sp.URL(), "i-1")
	if err != nil || got.Status != provider.StatusProvisioning {
		t.Errorf("Get = %+v, %v; want PROVISIONING", got, err)
	}
}

func TestClient_WrongTokenIsResponseError(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t, func(c *providertest.Config) { c.Token = "s3cret" })
	_, err := provider.NewClient(provider.ClientConfig{Token: "guess"}).Get(t.Context(), sp.URL(), "i-1")
	wantOnly(t, err, isResponseError)
	var re *provider.ResponseError
	if errors.As(err, &re) && re.StatusCode != http.StatusUnauthorized {
		t.Errorf("status = %d, want 401", re.StatusCode)
	}
}

func TestClient_RefusalIsResponseErrorWithBody(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	sp.FailCreate(http.StatusConflict, `{"reason":"QUOTA_EXCEEDED","detail":"no room"}`)
	_, err := provider.NewClient(provider.ClientConfig{}).Create(t.Context(), sp.URL(), vmRequest("i-1"))
	wantOnly(t, err, isResponseError)
	var re *provider.ResponseError
	if !errors.As(err, &re) {
		t.Fatal("no ResponseError")
	}
	if re.StatusCode != http.StatusConflict || string(re.Body) != `{"reason":"QUOTA_EXCEEDED","detail":"no room"}` {
		t.Errorf("ResponseError = %d %s, want 409 with the provider's body", re.StatusCode, re.Body)
	}
	if !strings.Contains(err.Error(), "no room") {
		t.Errorf("error %q does not say the provider's detail", err)
	}
	if len(sp.Instances()) != 0 {
		t.Error("a refused create created an instance")
	}
}

func TestClient_TimeoutIsErrTimeout(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	sp.BlockCreates()
	c := provider.NewClient(provider.ClientConfig{Timeout: 50 * time.Millisecond})
	_, err := c.Create(t.Context(), sp.URL(), vmRequest("i-1"))
	wantOnly(t, err, isTimeout)

	// The caller's own deadline counts as a timeout too.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = provider.NewClient(provider.ClientConfig{}).Create(ctx, sp.URL(), vmRequest("i-1"))
	wantOnly(t, err, isTimeout)

	// The outcome was unknown indeed: the provider acts once unblocked, and
	// a retry finds the one instance.
	sp.UnblockCreates()
	if _, err := provider.NewClient(provider.ClientConfig{}).Create(t.Context(), sp.URL(), vmRequest("i-1")); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n := len(sp.Instances()); n != 1 {
		t.Errorf("provider holds %d instances, want 1", n)
	}
}

func TestClient_CallerCancelIsNotATimeout(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	sp.BlockCreates()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := provider.NewClient(provider.ClientConfig{}).Create(ctx, sp.URL(), vmRequest("i-1"))
		errc <- err
	}()
	sp.WaitForCall(t, providertest.MethodCreate, "i-1")
	cancel()
	wantOnly(t, <-errc, isCanceled)
}

func TestClient_UnreachableOnClosedPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	c := provider.NewClient(provider.ClientConfig{})
	_, err = c.Create(t.Context(), endpoint, vmRequest("i-1"))
	wantOnly(t, err, isUnreachable)
	_, err = c.Get(t.Context(), endpoint, "i-1")
	wantOnly(t, err, isUnreachable)
	_, err = c.Update(t.Context(), endpoint, provider.UpdateRequest{InstanceID: "i-1", ServiceType: "vm"})
	wantOnly(t, err, isUnreachable)
	_, err = c.Delete(t.Context(), endpoint, "i-1")
	wantOnly(t, err, isUnreachable)
	_, err = c.Health(t.Context(), endpoint)
	wantOnly(t, err, isUnreachable)
}

func TestClient_ProviderDownIsUnreachable(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	c := provider.NewClient(provider.ClientConfig{})
	if _, err := c.Create(t.Context(), sp.URL(), vmRequest("i-1")); err != nil {
		t.Fatal(err)
	}
	sp.GoDown()
	_, err := c.Create(t.Context(), sp.URL(), vmRequest("i-2"))
	wantOnly(t, err, isUnreachable)
	_, err = c.Delete(t.Context(), sp.URL(), "i-1")
	wantOnly(t, err, isUnreachable)
	sp.ComeBack()
	if inst, err := c.Delete(t.Context(), sp.URL(), "i-1"); err != nil || inst.Status != provider.StatusDeleted {
		t.Errorf("Delete after ComeBack = %+v, %v; want DELETED", inst, err)
	}
}

func TestClient_NotFound(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t, func(c *providertest.Config) { c.Update = true })
	c := provider.NewClient(provider.ClientConfig{})
	for name, call := range map[string]func() error{
		"Get":    func() error { _, err := c.Get(t.Context(), sp.URL(), "nope"); return err },
		"Delete": func() error { _, err := c.Delete(t.Context(), sp.URL(), "nope"); return err },
		"Update": func() error {
			_, err := c.Update(t.Context(), sp.URL(), provider.UpdateRequest{InstanceID: "nope", ServiceType: "vm"})
			return err
		},
	} {
		err := call()
		var re *provider.ResponseError
		if !errors.Is(err, provider.ErrNotFound) || !errors.As(err, &re) || re.StatusCode != 404 {
			t.Errorf("%s: err = %v, want ErrNotFound and a 404 ResponseError", name, err)
		}
		if p, ok := re.Problem(); !ok || p.Reason != "INSTANCE_NOT_FOUND" {
			t.Errorf("%s: problem = %+v, %v; want INSTANCE_NOT_FOUND", name, p, ok)
		}
	}
}

func TestClient_Health(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	c := provider.NewClient(provider.ClientConfig{})
	h, err := c.Health(t.Context(), sp.URL())
	if err != nil || h.Status != provider.HealthHealthy {
		t.Errorf("Health = %+v, %v; want healthy", h, err)
	}
	sp.SetHealth(false)
	h, err = c.Health(t.Context(), sp.URL())
	if err != nil || h.Status != provider.HealthUnhealthy || h.Message == "" {
		t.Errorf("Health = %+v, %v; want unhealthy with a message", h, err)
	}
}

// answering returns an endpoint whose every request gets status and body.
func answering(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestClient_InvalidAnswers(t *testing.T) {
	t.Parallel()
	c := provider.NewClient(provider.ClientConfig{})
	tests := []struct {
		name, body string
		reason     string
	}{
		{name: "TooLarge", body: `{"instance_id":"i-1","status":"RUNNING","message":"` + strings.Repeat("a", 1<<20) + `"}`, reason: "answers over 1 MiB are refused"},
		{name: "NotJSON", body: `<html>`, reason: "a 2xx must be JSON"},
		{name: "OtherInstance", body: `{"instance_id":"i-2","status":"RUNNING"}`, reason: "the answer must be about the instance asked for"},
		{name: "UnknownStatus", body: `{"instance_id":"i-1","status":"SPINNING"}`, reason: "the status must be one of the contract's"},
		{name: "Empty", body: ``, reason: "a create must answer the instance"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.Create(t.Context(), answering(t, http.StatusCreated, tc.body), vmRequest("i-1"))
			if !errors.Is(err, provider.ErrInvalidResponse) {
				t.Errorf("%s\nerr = %v, want ErrInvalidResponse", tc.reason, err)
			}
		})
	}
}

func TestClient_DeleteWithoutBody(t *testing.T) {
	t.Parallel()
	c := provider.NewClient(provider.ClientConfig{})
	for status, want := range map[int]provider.Status{204: provider.StatusDeleted, 200: provider.StatusDeleted, 202: provider.StatusDeleting} {
		inst, err := c.Delete(t.Context(), answering(t, status, ""), "i-1")
		if err != nil || !reflect.DeepEqual(inst, provider.Instance{InstanceID: "i-1", Status: want}) {
			t.Errorf("%d without body: Delete = %+v, %v; want %s", status, inst, err, want)
		}
	}
}

func TestClient_DoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.RedirectHandler(other.URL+"/api/v1/services", http.StatusTemporaryRedirect))
	t.Cleanup(srv.Close)

	_, err := provider.NewClient(provider.ClientConfig{HTTPClient: &http.Client{}}).Create(t.Context(), srv.URL, vmRequest("i-1"))
	var re *provider.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("err = %v, want a 307 ResponseError", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

func TestClient_EndpointWithPathPrefix(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	target, err := url.Parse(sp.URL())
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(http.StripPrefix("/sp", httputil.NewSingleHostReverseProxy(target)))
	t.Cleanup(front.Close)

	inst, err := provider.NewClient(provider.ClientConfig{}).Create(t.Context(), front.URL+"/sp/", vmRequest("i-1"))
	if err != nil || inst.Status != provider.StatusProvisioning {
		t.Errorf("Create through /sp/ = %+v, %v", inst, err)
	}
}

func TestClient_BadArguments(t *testing.T) {
	t.Parallel()
	c := provider.NewClient(provider.ClientConfig{})
	for name, call := range map[string]func() error{
		"NoScheme": func() error { _, err := c.Get(t.Context(), "127.0.0.1:9001", "i-1"); return err },
		"FTP":      func() error { _, err := c.Health(t.Context(), "ftp://127.0.0.1"); return err },
		"NoInstanceID": func() error {
			_, err := c.Create(t.Context(), "http://127.0.0.1:1", provider.CreateRequest{ServiceType: "vm"})
			return err
		},
		"EmptyID": func() error { _, err := c.Delete(t.Context(), "http://127.0.0.1:1", ""); return err },
		"UpdateNoServiceType": func() error {
			_, err := c.Update(t.Context(), "http://127.0.0.1:1", provider.UpdateRequest{InstanceID: "i-1"})
			return err
		},
		"UpdateNoInstanceID": func() error {
			_, err := c.Update(t.Context(), "http://127.0.0.1:1", provider.UpdateRequest{ServiceType: "vm"})
			return err
		},
	} {
		err := call()
		if err == nil || errors.Is(err, provider.ErrUnreachable) || errors.Is(err, provider.ErrTimeout) {
			t.Errorf("%s: err = %v, want an argument error, never sent", name, err)
		}
	}
}

func vmUpdate(id string, vcpu int) provider.UpdateRequest {
	return provider.UpdateRequest{InstanceID: id, ServiceType: "vm", Spec: map[string]any{"vcpu": float64(vcpu)}}
}

func TestClient_UpdateRoundTrip(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t, func(c *providertest.Config) { c.Update = true })
	c := provider.NewClient(provider.ClientConfig{})
	if _, err := c.Create(t.Context(), sp.URL(), vmRequest("i-1")); err != nil {
		t.Fatal(err)
	}
	r := provider.ReportFunc(func(context.Context, provider.StatusReport) error { return nil })
	if err := sp.Report(t.Context(), r, "i-1", provider.StatusRunning); err != nil {
		t.Fatal(err)
	}

	inst, err := c.Update(t.Context(), sp.URL(), vmUpdate("i-1", 4))
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if diff := cmp.Diff(provider.Instance{InstanceID: "i-1", Status: provider.StatusProvisioning}, inst); diff != "" {
		t.Errorf("a new spec answers PROVISIONING: -want +got:\n%s", diff)
	}
	want := providertest.Call{Method: providertest.MethodUpdate, InstanceID: "i-1", ServiceType: "vm",
		Spec: map[string]any{"vcpu": float64(4)}}
	if diff := cmp.Diff([]providertest.Call{want}, sp.Updates()); diff != "" {
		t.Errorf("updates (the new spec, no Idempotency-Key): -want +got:\n%s", diff)
	}

	// The spec it has already changes nothing: a replay is harmless.
	if err := sp.Report(t.Context(), r, "i-1", provider.StatusRunning); err != nil {
		t.Fatal(err)
	}
	if inst, err := c.Update(t.Context(), sp.URL(), vmUpdate("i-1", 4)); err != nil || inst.Status != provider.StatusRunning {
		t.Errorf("Update with the same spec = %+v, %v; want RUNNING, unchanged", inst, err)
	}
}

func TestClient_UpdateNotServedIs405(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	c := provider.NewClient(provider.ClientConfig{})
	if _, err := c.Create(t.Context(), sp.URL(), vmRequest("i-1")); err != nil {
		t.Fatal(err)
	}
	_, err := c.Update(t.Context(), sp.URL(), vmUpdate("i-1", 4))
	wantOnly(t, err, isResponseError)
	var re *provider.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusMethodNotAllowed || errors.Is(err, provider.ErrNotFound) {
		t.Errorf("err = %v, want a 405 ResponseError, not ErrNotFound", err)
	}
}

func TestClient_UpdateRefusalIsResponseErrorWithBody(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t, func(c *providertest.Config) { c.Update = true })
	c := provider.NewClient(provider.ClientConfig{})
	if _, err := c.Create(t.Context(), sp.URL(), vmRequest("i-1")); err != nil {
		t.Fatal(err)
	}
	sp.FailUpdate(http.StatusUnprocessableEntity, `{"reason":"SPEC_NOT_UPDATABLE","detail":"vcpu cannot shrink"}`)
	_, err := c.Update(t.Context(), sp.URL(), vmUpdate("i-1", 1))
	wantOnly(t, err, isResponseError)
	var re *provider.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusUnprocessableEntity ||
		string(re.Body) != `{"reason":"SPEC_NOT_UPDATABLE","detail":"vcpu cannot shrink"}` {
		t.Fatalf("err = %v, want a 422 ResponseError with the provider's body", err)
	}
	if !strings.Contains(err.Error(), "vcpu cannot shrink") {
		t.Errorf("error %q does not say the provider's detail", err)
	}
}

// Finding 5 (SSRF): a Client's error does not say what an endpoint's
// server answered unless it is a problem of the contract, since Steward
// puts these errors where users read them; Body still holds it.
func TestClient_ErrorSaysNoBodyButAContractProblemsDetail(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"SECRET-INTERNAL-DATA":                           "answered 500 Internal Server Error",
		`{"detail":"SECRET-INTERNAL-DATA","status":500}`: "answered 500 Internal Server Error",
		`{"reason":"BACKEND_DOWN","detail":"db down"}`:   "answered 500 Internal Server Error: db down",
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(body))
		}))
		_, err := provider.NewClient(provider.ClientConfig{}).Health(t.Context(), srv.URL)
		srv.Close()
		var re *provider.ResponseError
		if !errors.As(err, &re) || string(re.Body) != body {
			t.Fatalf("answer %s: err = %v, want a ResponseError with the body", body, err)
		}
		if got := re.Error(); got != want {
			t.Errorf("answer %s: error %q, want %q", body, got, want)
		}
	}
}
