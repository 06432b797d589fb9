package credentials_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// lockedProvider realises vm instances at once and holds one password per
// instance; a rotation waits until release is closed, so a test can ask
// for another while it runs. It counts the rotations by operation id.
type lockedProvider struct {
	release chan struct{}

	mu        sync.Mutex
	rotations map[string]int // by operation id
	password  map[string]string
}

func (p *lockedProvider) Create(_ context.Context, req provider.CreateRequest) (provider.Instance, error) {
	return provider.Instance{InstanceID: req.InstanceID, Status: provider.StatusRunning}, nil
}

func (p *lockedProvider) Get(_ context.Context, id string) (provider.Instance, error) {
	return provider.Instance{InstanceID: id, Status: provider.StatusRunning}, nil
}

func (p *lockedProvider) Delete(_ context.Context, id string) (provider.Instance, error) {
	return provider.Instance{InstanceID: id, Status: provider.StatusDeleted}, nil
}

func (p *lockedProvider) Health(context.Context) error { return nil }

func (p *lockedProvider) Credentials(_ context.Context, id string) (provider.Credentials, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return provider.Credentials{Username: "owner", Password: "pw-" + id + "-" + p.password[id]}, nil
}

func (p *lockedProvider) RotateCredentials(ctx context.Context, req provider.RotateRequest) (provider.Rotated, error) {
	select {
	case <-p.release:
	case <-ctx.Done():
		return provider.Rotated{}, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rotations[req.OperationID]++
	p.password[req.InstanceID] = req.OperationID
	return provider.Rotated{}, nil
}

func (p *lockedProvider) rotated() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.rotations {
		out[k] = v
	}
	return out
}

type operation struct {
	ID       string         `json:"id"`
	Done     bool           `json:"done"`
	Error    map[string]any `json:"error"`
	Response map[string]any `json:"response"`
}

// Issue 24: a rotation is an Operation that survives a restart of Steward
// and reaches the provider once under its operation id; a second rotation
// of the same order while one runs is 409 ROTATION_IN_PROGRESS; once it is
// done, the credentials read are the rotated ones. An order whose provider
// has no credentials answers 409 CREDENTIALS_NOT_SUPPORTED.
func TestRotate_OneAtATimeAndAcrossARestart(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, apitest.Fast)
		p := &lockedProvider{release: make(chan struct{}), rotations: map[string]int{}, password: map[string]string{}}
		const token = "stp_test-call-token"
		srv := httptest.NewServer(provider.NewServer(p, provider.ServerConfig{Token: token}))
		t.Cleanup(srv.Close)
		s.Do(t, "POST", "/api/v1/providers", provider.Registration{Name: "cred-sp", Endpoint: srv.URL, ServiceTypes: []string{"vm"},
			Operations: []string{provider.OperationCredentials}, CallToken: token}).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-items?id=small-vm", map[string]any{"service_type": "vm",
			"defaults": map[string]any{"vcpu": map[string]any{"count": 1}, "memory": map[string]any{"size": "1GB"},
				"guest_os": map[string]any{"type": "fedora-39"}}}).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=box", map[string]any{"catalog_item_id": "small-vm"}).Want(t, http.StatusCreated)
		poll.Until(t, "order box is up", func() bool {
			var o struct{ State string }
			s.Do(t, "GET", "/api/v1/catalog-item-instances/box", nil).Want(t, http.StatusOK).JSON(t, &o)
			return o.State == "up"
		})
		password := func(s *apitest.Server) string {
			var c struct{ Password string }
			s.Do(t, "GET", "/api/v1/catalog-item-instances/box/credentials", nil).Want(t, http.StatusOK).JSON(t, &c)
			return c.Password
		}
		before := password(s)

		var op operation
		s.Do(t, "POST", "/api/v1/catalog-item-instances/box:rotateCredentials", nil).Want(t, http.StatusAccepted).JSON(t, &op)
		s.Do(t, "POST", "/api/v1/catalog-item-instances/box:rotateCredentials", nil).
			WantProblem(t, http.StatusConflict, "ROTATION_IN_PROGRESS")

		// Steward restarts while the provider holds the rotation; the job
		// is taken up again and the rotation reaches the provider once.
		s = s.Restart(t)
		close(p.release)
		poll.Until(t, "the rotation is done", func() bool {
			s.Do(t, "GET", "/api/v1/operations/"+op.ID, nil).Want(t, http.StatusOK).JSON(t, &op)
			return op.Done
		})
		if op.Error != nil {
			t.Fatalf("the rotation failed: %v", op.Error)
		}
		if got := p.rotated(); got[op.ID] != 1 || len(got) != 1 {
			t.Errorf("rotations at the provider %v, want operation %s once", got, op.ID)
		}
		if after := password(s); after == before || !strings.HasSuffix(after, op.ID) {
			t.Errorf("credentials after the rotation %q (before %q), want the rotated ones", after, before)
		}
		// Done: the next rotation may start.
		var next operation
		s.Do(t, "POST", "/api/v1/catalog-item-instances/box:rotateCredentials", nil).Want(t, http.StatusAccepted).JSON(t, &next)
		poll.Until(t, "the second rotation is done", func() bool {
			s.Do(t, "GET", "/api/v1/operations/"+next.ID, nil).Want(t, http.StatusOK).JSON(t, &next)
			return next.Done
		})
		if got := p.rotated(); got[next.ID] != 1 || got[op.ID] != 1 {
			t.Errorf("rotations at the provider %v, want each operation once", got)
		}

		// A provider without credentials.
		s.Do(t, "PATCH", "/api/v1/providers/cred-sp", map[string]any{"operations": []string{}}).Want(t, http.StatusOK)
		r := s.Do(t, "GET", "/api/v1/catalog-item-instances/box/credentials", nil)
		r.WantProblem(t, http.StatusConflict, "CREDENTIALS_NOT_SUPPORTED")

	})
}
