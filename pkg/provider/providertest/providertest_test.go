package providertest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/stewardhq/steward/pkg/provider"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func vm(id string) provider.CreateRequest {
	return provider.CreateRequest{InstanceID: id, ServiceType: "vm", Spec: map[string]any{"vcpu": float64(1)},
		Metadata: provider.CreateMetadata{OrderID: "o-1"}}
}

func TestServer_RecordsCalls(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	c := provider.NewClient(provider.ClientConfig{})
	ctx := t.Context()
	if !strings.HasPrefix(sp.URL(), "http://127.0.0.1:") {
		t.Errorf("URL = %q, want 127.0.0.1", sp.URL())
	}

	_, _ = c.Create(ctx, sp.URL(), vm("i-1"))
	_, _ = c.Get(ctx, sp.URL(), "i-1")
	_, _ = c.Health(ctx, sp.URL())
	_, _ = c.Delete(ctx, sp.URL(), "i-1")
	_, _ = c.Delete(ctx, sp.URL(), "i-1") // already gone: still a call

	create := providertest.Call{Method: providertest.MethodCreate, InstanceID: "i-1", ServiceType: "vm",
		Spec: map[string]any{"vcpu": float64(1)}, Metadata: provider.CreateMetadata{OrderID: "o-1"}, IdempotencyKey: "i-1"}
	del := providertest.Call{Method: providertest.MethodDelete, InstanceID: "i-1"}
	want := []providertest.Call{
		create,
		{Method: providertest.MethodGet, InstanceID: "i-1"},
		{Method: providertest.MethodHealth},
		del, del,
	}
	if diff := cmp.Diff(want, sp.Calls()); diff != "" {
		t.Errorf("calls: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]providertest.Call{create}, sp.Creates()); diff != "" {
		t.Errorf("creates: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]providertest.Call{del, del}, sp.Deletes()); diff != "" {
		t.Errorf("deletes: -want +got:\n%s", diff)
	}
	if n := len(sp.Instances()); n != 0 {
		t.Errorf("%d instances left, want none", n)
	}
}

func TestServer_WaitForCall(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	errc := make(chan error, 1)
	go func() {
		_, err := provider.NewClient(provider.ClientConfig{}).Create(context.Background(), sp.URL(), vm("i-9"))
		errc <- err
	}()
	if got := sp.WaitForCall(t, providertest.MethodCreate, "i-9"); got.IdempotencyKey != "i-9" {
		t.Errorf("call = %+v", got)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got := sp.WaitForCall(t, providertest.MethodCreate, ""); got.InstanceID != "i-9" {
		t.Errorf("any-instance call = %+v", got)
	}
}

func TestServer_FailCreate(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	c := provider.NewClient(provider.ClientConfig{})

	sp.FailCreate(http.StatusServiceUnavailable, "")
	_, err := c.Create(t.Context(), sp.URL(), vm("i-1"))
	var re *provider.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 503 {
		t.Fatalf("err = %v, want a 503 ResponseError", err)
	}
	if p, ok := re.Problem(); !ok || p.Reason != "INJECTED_FAILURE" {
		t.Errorf("an empty body answers a problem; got %+v, %v", p, ok)
	}
	if len(sp.Creates()) != 1 || len(sp.Instances()) != 0 {
		t.Error("a failed create must be recorded and create nothing")
	}

	sp.SucceedCreates()
	if _, err := c.Create(t.Context(), sp.URL(), vm("i-1")); err != nil {
		t.Fatalf("after SucceedCreates: %v", err)
	}
	if _, ok := sp.Instances()["i-1"]; !ok {
		t.Error("instance not created after SucceedCreates")
	}
}

func TestServer_FailDeletes(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	c := provider.NewClient(provider.ClientConfig{})
	if _, err := c.Create(t.Context(), sp.URL(), vm("i-1")); err != nil {
		t.Fatal(err)
	}
	sp.FailDeletes(http.StatusInternalServerError)
	_, err := c.Delete(t.Context(), sp.URL(), "i-1")
	var re *provider.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 500 {
		t.Fatalf("err = %v, want a 500 ResponseError", err)
	}
	if _, ok := sp.Instances()["i-1"]; !ok {
		t.Error("a failed delete deleted the instance")
	}
	sp.SucceedDeletes()
	if inst, err := c.Delete(t.Context(), sp.URL(), "i-1"); err != nil || inst.Status != provider.StatusDeleted {
		t.Errorf("after SucceedDeletes: %+v, %v", inst, err)
	}
}

func TestServer_HealthAndDown(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	c := provider.NewClient(provider.ClientConfig{})

	sp.SetHealth(false)
	if h, err := c.Health(t.Context(), sp.URL()); err != nil || h.Status != provider.HealthUnhealthy {
		t.Errorf("Health = %+v, %v; want unhealthy", h, err)
	}
	sp.SetHealth(true)
	sp.GoDown()
	if _, err := c.Health(t.Context(), sp.URL()); !errors.Is(err, provider.ErrUnreachable) {
		t.Errorf("Health while down: err = %v, want ErrUnreachable", err)
	}
	if _, err := c.Create(t.Context(), sp.URL(), vm("i-1")); !errors.Is(err, provider.ErrUnreachable) {
		t.Errorf("Create while down: err = %v, want ErrUnreachable", err)
	}
	sp.ComeBack()
	if h, err := c.Health(t.Context(), sp.URL()); err != nil || h.Status != provider.HealthHealthy {
		t.Errorf("Health after ComeBack = %+v, %v; want healthy", h, err)
	}
	want := []providertest.Call{{Method: providertest.MethodHealth}, {Method: providertest.MethodHealth}}
	if diff := cmp.Diff(want, sp.Calls()); diff != "" {
		t.Errorf("calls (none while down): -want +got:\n%s", diff)
	}
}

func TestServer_BlockCreates(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	sp.BlockCreates()
	errc := make(chan error, 1)
	go func() {
		_, err := provider.NewClient(provider.ClientConfig{}).Create(context.Background(), sp.URL(), vm("i-1"))
		errc <- err
	}()
	sp.WaitForCall(t, providertest.MethodCreate, "i-1")
	if n := len(sp.Instances()); n != 0 {
		t.Fatalf("a blocked create made %d instances", n)
	}
	sp.UnblockCreates()
	if err := <-errc; err != nil {
		t.Fatalf("Create after UnblockCreates: %v", err)
	}
	if _, ok := sp.Instances()["i-1"]; !ok {
		t.Error("instance missing after UnblockCreates")
	}
}

// A create still blocked when the test ends must not hang the cleanup.
func TestServer_CleanupReleasesBlockedCreates(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	sp.BlockCreates()
	c := provider.NewClient(provider.ClientConfig{Timeout: 20 * time.Millisecond})
	if _, err := c.Create(t.Context(), sp.URL(), vm("i-1")); !errors.Is(err, provider.ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
}

func TestServer_Report(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	if _, err := provider.NewClient(provider.ClientConfig{}).Create(t.Context(), sp.URL(), vm("i-1")); err != nil {
		t.Fatal(err)
	}
	var got []provider.StatusReport
	r := provider.ReportFunc(func(_ context.Context, sr provider.StatusReport) error {
		got = append(got, sr)
		return nil
	})
	if err := sp.Report(t.Context(), r, "i-1", provider.StatusRunning); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].InstanceID != "i-1" || got[0].Status != provider.StatusRunning || got[0].ObservedTime.IsZero() {
		t.Errorf("reported %+v", got)
	}
	if st := sp.Instances()["i-1"].Status; st != provider.StatusRunning {
		t.Errorf("stored status = %s, want RUNNING", st)
	}
	errBusy := errors.New("steward busy")
	if err := sp.Report(t.Context(), provider.ReportFunc(func(context.Context, provider.StatusReport) error { return errBusy }), "i-1", provider.StatusFailed); !errors.Is(err, errBusy) {
		t.Errorf("err = %v, want the reporter's", err)
	}
}

func TestServer_TokenAndRegistration(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t, func(c *providertest.Config) { c.Token = "s3cret" })
	if _, err := provider.NewClient(provider.ClientConfig{}).Health(t.Context(), sp.URL()); err == nil {
		t.Error("a call without the token was served")
	}
	if _, err := provider.NewClient(provider.ClientConfig{Token: "s3cret"}).Health(t.Context(), sp.URL()); err != nil {
		t.Errorf("with the token: %v", err)
	}
	want := provider.Registration{Name: "kv", Endpoint: sp.URL(), ServiceTypes: []string{"vm", "database"}}
	if diff := cmp.Diff(want, sp.Registration("kv", "vm", "database")); diff != "" {
		t.Errorf("registration: -want +got:\n%s", diff)
	}
}

func TestServer_Update(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t, func(c *providertest.Config) { c.Update = true })
	c := provider.NewClient(provider.ClientConfig{})
	want := provider.Registration{Name: "kv", Endpoint: sp.URL(), ServiceTypes: []string{"vm"},
		Operations: []string{provider.OperationUpdate}}
	if diff := cmp.Diff(want, sp.Registration("kv", "vm")); diff != "" {
		t.Errorf("registration lists the update operation: -want +got:\n%s", diff)
	}
	if _, err := c.Create(t.Context(), sp.URL(), vm("i-1")); err != nil {
		t.Fatal(err)
	}
	if err := sp.Report(t.Context(), provider.ReportFunc(func(context.Context, provider.StatusReport) error { return nil }),
		"i-1", provider.StatusRunning); err != nil {
		t.Fatal(err)
	}

	errc := make(chan error, 1)
	go func() {
		_, err := c.Update(context.Background(), sp.URL(),
			provider.UpdateRequest{InstanceID: "i-1", ServiceType: "vm", Spec: map[string]any{"vcpu": float64(2)}})
		errc <- err
	}()
	got := sp.WaitForCall(t, providertest.MethodUpdate, "i-1")
	if err := <-errc; err != nil {
		t.Fatalf("Update: %v", err)
	}
	update := providertest.Call{Method: providertest.MethodUpdate, InstanceID: "i-1", ServiceType: "vm",
		Spec: map[string]any{"vcpu": float64(2)}}
	if diff := cmp.Diff(update, got); diff != "" {
		t.Errorf("WaitForCall: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]providertest.Call{update}, sp.Updates()); diff != "" {
		t.Errorf("updates: -want +got:\n%s", diff)
	}
	if st := sp.Instances()["i-1"].Status; st != provider.StatusProvisioning {
		t.Errorf("status after an update = %s, want PROVISIONING", st)
	}

	sp.FailUpdate(http.StatusConflict, "")
	_, err := c.Update(t.Context(), sp.URL(), provider.UpdateRequest{InstanceID: "i-1", ServiceType: "vm"})
	var re *provider.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusConflict {
		t.Fatalf("err = %v, want a 409 ResponseError", err)
	}
	if p, ok := re.Problem(); !ok || p.Reason != "INJECTED_FAILURE" || p.Detail != "providertest: FailUpdate" {
		t.Errorf("an empty body answers a problem naming the knob; got %+v, %v", p, ok)
	}
	sp.SucceedUpdates()
	if _, err := c.Update(t.Context(), sp.URL(), provider.UpdateRequest{InstanceID: "nope", ServiceType: "vm"}); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("Update of an unknown instance: err = %v, want ErrNotFound", err)
	}
	if n := len(sp.Updates()); n != 3 {
		t.Errorf("%d updates recorded, want 3 (a failed one too)", n)
	}
}

func TestServer_UpdateNotServedByDefault(t *testing.T) {
	t.Parallel()
	sp := providertest.New(t)
	c := provider.NewClient(provider.ClientConfig{})
	if _, err := c.Create(t.Context(), sp.URL(), vm("i-1")); err != nil {
		t.Fatal(err)
	}
	sp.FailUpdate(http.StatusInternalServerError, "") // no effect: updates are not served
	_, err := c.Update(t.Context(), sp.URL(), provider.UpdateRequest{InstanceID: "i-1", ServiceType: "vm"})
	var re *provider.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("err = %v, want a 405 ResponseError", err)
	}
	if n := len(sp.Updates()); n != 1 {
		t.Errorf("%d updates recorded, want the refused one", n)
	}
	if ops := sp.Registration("kv", "vm").Operations; len(ops) != 0 {
		t.Errorf("Operations = %v, want none", ops)
	}
}
