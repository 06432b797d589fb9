package providerhost_test

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stewardhq/steward/internal/providerhost"
	"github.com/stewardhq/steward/pkg/provider"
)

// backend is a provider that counts its Close calls; its calls are never
// made here.
type backend struct {
	provider.Provider
	closed atomic.Int32
}

func (b *backend) Close() { b.closed.Add(1) }

func newDaemon(settings providerhost.Settings, b *backend) (*providerhost.Daemon[*backend], *atomic.Int32) {
	var opened atomic.Int32
	return providerhost.NewDaemon(providerhost.DaemonConfig[*backend]{Settings: settings, Component: "testprovider",
		Registration: provider.Registration{ServiceTypes: []string{"container"}},
		Open:         func(context.Context) (*backend, error) { opened.Add(1); return b, nil }}), &opened
}

func TestDaemon_ServesUntilStoppedThenClosesTheProvider(t *testing.T) {
	b := &backend{}
	// Steward is out of reach: the registration retries in the background.
	d, opened := newDaemon(providerhost.Settings{Name: "test-sp", StewardURLs: []string{"http://127.0.0.1:1"}}, b)
	if err := d.Stop(t.Context()); err != nil || b.closed.Load() != 0 {
		t.Fatalf("Stop before Serve: %v, %d Close calls; want nothing done", err, b.closed.Load())
	}
	p, err := d.Serve(t.Context())
	if err != nil || p != b || opened.Load() != 1 {
		t.Fatalf("Serve: %v, %v, opened %d times; want the provider, opened once", p, err, opened.Load())
	}
	if !strings.HasPrefix(d.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q once serving; want the listener's", d.URL())
	}
	if err := d.Stop(t.Context()); err != nil || b.closed.Load() != 1 {
		t.Fatalf("Stop: %v, %d Close calls; want the provider closed", err, b.closed.Load())
	}
	if err := d.Stop(t.Context()); err != nil {
		t.Fatalf("a second Stop: %v", err)
	}
}

func TestDaemon_ServeLeavesNothingOpenWhenItFails(t *testing.T) {
	t.Run("no Steward URL", func(t *testing.T) {
		d, opened := newDaemon(providerhost.Settings{Name: "test-sp"}, &backend{})
		_, err := d.Serve(t.Context())
		if err == nil || err.Error() != "testprovider: a Steward URL is required" || opened.Load() != 0 {
			t.Fatalf("Serve: %v, opened %d times; want the URL asked for, nothing opened", err, opened.Load())
		}
	})
	t.Run("the address is taken", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		b := &backend{}
		d, _ := newDaemon(providerhost.Settings{Name: "test-sp", Listen: ln.Addr().String(),
			StewardURLs: []string{"http://127.0.0.1:1"}}, b)
		if _, err := d.Serve(t.Context()); err == nil || !strings.HasPrefix(err.Error(), "testprovider: listen on ") {
			t.Fatalf("Serve: %v; want the listen error, named by the component", err)
		}
		if b.closed.Load() != 1 {
			t.Errorf("%d Close calls after a failed Serve; want the provider closed", b.closed.Load())
		}
	})
}

func TestSettings_RegistrarAndReporterCallTheSameSteward(t *testing.T) {
	s := providerhost.Settings{Name: "test-sp", StewardURLs: []string{"http://a", "http://b"}, Token: "tok",
		Labels: map[string]string{"region": "eu"}}
	rc := s.Registrar(provider.Registration{ServiceTypes: []string{"container"}})
	if rc.Registration.Name != "test-sp" || rc.Registration.Metadata["region"] != "eu" ||
		rc.Registration.ServiceTypes[0] != "container" || rc.Token != "tok" || len(rc.StewardURLs) != 2 {
		t.Errorf("Registrar: %+v", rc)
	}
	s.Labels["region"] = "us"
	if rc.Registration.Metadata["region"] != "eu" {
		t.Error("the registration shares the settings' labels map; want a copy")
	}
	if r := s.Reporter(); r.Token != "tok" || len(r.StewardURLs) != 2 || r.StewardURLs[1] != "http://b" {
		t.Errorf("Reporter: %+v", r)
	}
}
