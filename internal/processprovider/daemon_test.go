package processprovider

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/pkg/provider"
)

// fakeSteward accepts a registration, sending it on the channel it returns,
// and every status report.
func fakeSteward(tb testing.TB) (url string, registrations <-chan provider.Registration) {
	tb.Helper()
	regs := make(chan provider.Registration, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/providers" {
			w.WriteHeader(http.StatusNoContent) // a status report
			return
		}
		var reg provider.Registration
		if err := json.NewDecoder(r.Body).Decode(&reg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		regs <- reg
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(provider.RegisteredProvider{Registration: reg, ID: "p-1"})
	}))
	tb.Cleanup(srv.Close)
	return srv.URL, regs
}

func TestDaemon_RegistersAndServesUpdate(t *testing.T) {
	t.Parallel()
	stewardURL, regs := fakeSteward(t)
	d := NewDaemon(DaemonConfig{StewardURL: stewardURL, NoOp: true,
		Logger: slog.New(slog.NewTextHandler(tbWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // before fakeSteward's: reports go out while Steward listens
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	timer := time.NewTimer(waitFor)
	defer timer.Stop()
	select {
	case <-d.Registered():
	case <-timer.C:
		t.Fatal("not registered in time")
	}
	reg := <-regs
	if diff := cmp.Diff([]string{provider.OperationUpdate, provider.OperationRepair}, reg.Operations); diff != "" {
		t.Errorf("registered operations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"container", "process-cluster", "namespaced-process"}, reg.ServiceTypes); diff != "" {
		t.Errorf("registered service types (-want +got):\n%s", diff)
	}

	// Only the caller that presents the registered call token is served.
	if reg.CallToken == "" || reg.CallToken != d.CallToken() {
		t.Fatalf("registered call token %q, the daemon's %q: want the same, not empty", reg.CallToken, d.CallToken())
	}
	for _, token := range []string{"", "stp_guess"} {
		_, err := provider.NewClient(provider.ClientConfig{Token: token}).Get(t.Context(), d.URL(), "i-1")
		if re := (*provider.ResponseError)(nil); !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized {
			t.Errorf("a call with token %q: err = %v, want 401", token, err)
		}
	}

	// What it registers, it serves: PUT is an update, not a 405.
	c := provider.NewClient(provider.ClientConfig{Token: reg.CallToken})
	if _, err := c.Create(t.Context(), d.URL(), provider.CreateRequest{InstanceID: "i-1", ServiceType: "container", Spec: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Update(t.Context(), d.URL(), provider.UpdateRequest{InstanceID: "i-1", ServiceType: "container",
		Spec: map[string]any{"max_restarts": 1}})
	if err != nil || got.Status != provider.StatusProvisioning {
		t.Errorf("Update = %+v, %v; want PROVISIONING", got, err)
	}
}
