package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"

	"github.com/stewardhq/steward/pkg/provider"
)

// kvProvider is a tiny provider: it "realises" instances in a map.
type kvProvider struct {
	mu        sync.Mutex
	instances map[string]provider.Instance
}

func (p *kvProvider) Create(_ context.Context, req provider.CreateRequest) (provider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if inst, ok := p.instances[req.InstanceID]; ok { // idempotent by instance id
		return inst, nil
	}
	if req.ServiceType != "vm" {
		return provider.Instance{}, &provider.HTTPError{Code: 422, Reason: "UNSUPPORTED_SERVICE_TYPE", Message: "only vm"}
	}
	inst := provider.Instance{InstanceID: req.InstanceID, Status: provider.StatusProvisioning}
	p.instances[req.InstanceID] = inst
	return inst, nil
}

func (p *kvProvider) Get(_ context.Context, id string) (provider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	inst, ok := p.instances[id]
	if !ok {
		return provider.Instance{}, provider.ErrNotFound
	}
	return inst, nil
}

func (p *kvProvider) Delete(_ context.Context, id string) (provider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.instances[id]; !ok {
		return provider.Instance{}, provider.ErrNotFound
	}
	delete(p.instances, id)
	return provider.Instance{InstanceID: id, Status: provider.StatusDeleted}, nil
}

func (p *kvProvider) Health(context.Context) error { return nil }

// Example serves a Provider with NewServer and calls it as Steward does,
// through a Client.
func Example() {
	p := &kvProvider{instances: map[string]provider.Instance{}}
	srv := httptest.NewServer(provider.NewServer(p, provider.ServerConfig{}))
	defer srv.Close()

	ctx := context.Background()
	c := provider.NewClient(provider.ClientConfig{})
	inst, err := c.Create(ctx, srv.URL, provider.CreateRequest{
		InstanceID:  "08aa-1",
		ServiceType: "vm",
		Spec:        map[string]any{"vcpu": 2},
	})
	if err != nil {
		fmt.Println("create:", err)
		return
	}
	fmt.Println("created:", inst.InstanceID, inst.Status)

	inst, err = c.Get(ctx, srv.URL, "08aa-1")
	fmt.Println("get:", inst.Status, err)

	_, err = c.Create(ctx, srv.URL, provider.CreateRequest{InstanceID: "08aa-2", ServiceType: "database"})
	var refused *provider.ResponseError
	if errors.As(err, &refused) {
		p, _ := refused.Problem()
		fmt.Println("refused:", refused.StatusCode, p.Reason)
	}

	inst, err = c.Delete(ctx, srv.URL, "08aa-1")
	fmt.Println("delete:", inst.Status, err)
	_, err = c.Delete(ctx, srv.URL, "08aa-1")
	fmt.Println("already gone:", errors.Is(err, provider.ErrNotFound))

	// Output:
	// created: 08aa-1 PROVISIONING
	// get: PROVISIONING <nil>
	// refused: 422 UNSUPPORTED_SERVICE_TYPE
	// delete: DELETED <nil>
	// already gone: true
}
