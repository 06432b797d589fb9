package lifecycle_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// BenchmarkOrders_CreateToUp measures the whole order flow, sustained: b.N
// orders are created by 16 clients as fast as they are acknowledged, and
// the clock stops when the last one is up (its provider reported RUNNING).
// It reports both rates: acknowledged/s (the creates) and up/s (b.N over
// the time to the last up). The provider answers each create after a
// latency (0, or 1s: a provider that takes its time), then reports RUNNING.
//
//	go test -run XXX -bench CreateToUp -benchtime 5000x ./internal/lifecycle/
func BenchmarkOrders_CreateToUp(b *testing.B) {
	for _, engine := range storetest.Engines() {
		for _, latency := range []time.Duration{0, time.Second} {
			b.Run(fmt.Sprintf("%s/provider=%v", engine, latency), func(b *testing.B) {
				benchCreateToUp(b, engine, latency, 16)
			})
		}
	}
}

func benchCreateToUp(b *testing.B, engine store.Engine, latency time.Duration, clients int) {
	s := apitest.Start(b, engine, benchLogger)
	p := &slowProvider{latency: latency, reporter: &provider.HTTPReporter{StewardURL: s.URL()}}
	ps := httptest.NewServer(provider.NewServer(p, provider.ServerConfig{}))
	b.Cleanup(ps.Close)
	b.Cleanup(p.wait)
	s.Do(b, "POST", "/api/v1/providers", provider.Registration{Name: "slow-sp", Endpoint: ps.URL,
		ServiceTypes: []string{"vm"}}).Want(b, http.StatusCreated)
	s.Do(b, "POST", "/api/v1/catalog-items?id=vm", map[string]any{"service_type": "vm",
		"defaults": map[string]any{"vcpu": map[string]any{"count": 2}, "memory": map[string]any{"size": "2GB"},
			"guest_os": map[string]any{"type": "fedora-39"}}}).Want(b, http.StatusCreated)

	s.BenchOrdersToUp(b, clients, func(int) any { return map[string]any{"catalog_item_id": "vm"} })
}

// slowProvider answers a create after its latency, then reports the
// instance RUNNING (as a provider whose backend took that long).
type slowProvider struct {
	latency  time.Duration
	reporter provider.StatusReporter
	mu       sync.Mutex
	held     map[string]bool
	reports  sync.WaitGroup
}

func (p *slowProvider) Create(ctx context.Context, req provider.CreateRequest) (provider.Instance, error) {
	if p.latency > 0 {
		select {
		case <-time.After(p.latency):
		case <-ctx.Done():
			return provider.Instance{}, ctx.Err()
		}
	}
	p.mu.Lock()
	if p.held == nil {
		p.held = map[string]bool{}
	}
	p.held[req.InstanceID] = true
	p.mu.Unlock()
	p.reports.Go(func() {
		_ = p.reporter.Report(context.Background(), provider.StatusReport{InstanceID: req.InstanceID,
			Status: provider.StatusRunning, ObservedTime: time.Now().UTC()})
	})
	return provider.Instance{InstanceID: req.InstanceID, Status: provider.StatusProvisioning}, nil
}

func (p *slowProvider) Get(_ context.Context, id string) (provider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.held[id] {
		return provider.Instance{}, provider.ErrNotFound
	}
	return provider.Instance{InstanceID: id, Status: provider.StatusRunning}, nil
}

func (p *slowProvider) Delete(_ context.Context, id string) (provider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.held, id)
	return provider.Instance{InstanceID: id, Status: provider.StatusDeleted}, nil
}

func (p *slowProvider) Health(context.Context) error { return nil }

func (p *slowProvider) wait() { p.reports.Wait() }
