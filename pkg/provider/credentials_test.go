package provider_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// credentialingStub hands out one secret per instance and rotates it.
type credentialingStub struct {
	stubProvider
	rotations map[string]int
}

func (p *credentialingStub) Credentials(_ context.Context, id string) (provider.Credentials, error) {
	if id == "missing" {
		return provider.Credentials{}, provider.ErrNotFound
	}
	return provider.Credentials{Username: "owner", Password: "pw-" + id}, nil
}

func (p *credentialingStub) RotateCredentials(_ context.Context, req provider.RotateRequest) (provider.Rotated, error) {
	if req.InstanceID == "missing" {
		return provider.Rotated{}, provider.ErrNotFound
	}
	p.rotations[req.OperationID]++
	return provider.Rotated{RotateTime: time.Unix(1700000000, 0).UTC()}, nil
}

// Issue 24: the routes that hand out secrets answer only the caller with
// the server's token: a server without one refuses them (401) even on
// loopback, and the Client reads and rotates with the token given by
// WithCallToken.
func TestServer_CredentialsOnlyToTheTokenHolder(t *testing.T) {
	t.Parallel()
	open := serve(t, &credentialingStub{rotations: map[string]int{}}, provider.ServerConfig{})
	for _, call := range [][2]string{{"GET", "/api/v1/services/i-1/credentials"}, {"POST", "/api/v1/services/i-1/credentials:rotate"}} {
		a := send(t, call[0], open+call[1], `{"operation_id":"op-1"}`)
		if a.status != http.StatusUnauthorized || problemOf(t, a).Reason != "UNAUTHENTICATED" {
			t.Errorf("%s %s on a server without a token: %d %s, want 401 UNAUTHENTICATED", call[0], call[1], a.status, a.body)
		}
	}
	// The same server still serves the rest of the contract openly.
	if a := send(t, "GET", open+"/api/v1/services/i-1", ""); a.status != http.StatusOK {
		t.Errorf("GET an instance on an open server: %d", a.status)
	}

	stub := &credentialingStub{rotations: map[string]int{}}
	guarded := serve(t, stub, provider.ServerConfig{Token: "stp_secret"})
	c := provider.NewClient(provider.ClientConfig{})
	var re *provider.ResponseError
	if _, err := c.Credentials(t.Context(), guarded, "i-1"); !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized {
		t.Errorf("credentials without the token: %v, want 401", err)
	}
	ctx := provider.WithCallToken(t.Context(), "stp_secret")
	got, err := c.Credentials(ctx, guarded, "i-1")
	if err != nil || got.InstanceID != "i-1" || got.Password != "pw-i-1" {
		t.Errorf("credentials with the token: %+v, %v", got, err)
	}
	if _, err := c.Credentials(ctx, guarded, "missing"); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("credentials of an unknown instance: %v, want ErrNotFound", err)
	}
	rot, err := c.RotateCredentials(ctx, guarded, provider.RotateRequest{InstanceID: "i-1", OperationID: "op-7"})
	if err != nil || rot.InstanceID != "i-1" || rot.OperationID != "op-7" || rot.RotateTime.IsZero() || stub.rotations["op-7"] != 1 {
		t.Errorf("rotate with the token: %+v, %v (rotations %v)", rot, err, stub.rotations)
	}
	if _, err := c.RotateCredentials(ctx, guarded, provider.RotateRequest{InstanceID: "i-1"}); err == nil {
		t.Error("a rotation without an operation id was sent")
	}
}
