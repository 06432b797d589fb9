package provider_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stewardhq/steward/pkg/provider"
)

// validatingStub refuses a spec that asks for "forbidden".
type validatingStub struct{ stubProvider }

func (validatingStub) Validate(_ context.Context, req provider.CreateRequest) error {
	if req.Spec["ask"] == "forbidden" {
		return &provider.HTTPError{Code: 400, Reason: "NOT_ALLOWED", Message: "forbidden is not allowed here; allowed: fine"}
	}
	return nil
}

// The validate route answers 204 for a spec a create would accept and the
// provider's refusal otherwise; a provider without Validator does not serve
// it.
func TestServer_Validate(t *testing.T) {
	t.Parallel()
	url := serve(t, &validatingStub{}, provider.ServerConfig{})
	c := provider.NewClient(provider.ClientConfig{})
	if err := c.Validate(t.Context(), url, provider.CreateRequest{ServiceType: "db", Spec: map[string]any{"ask": "fine"}}); err != nil {
		t.Errorf("an acceptable spec: %v", err)
	}
	err := c.Validate(t.Context(), url, provider.CreateRequest{ServiceType: "db", Spec: map[string]any{"ask": "forbidden"}})
	var re *provider.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest {
		t.Fatalf("a refused spec: %v, want 400", err)
	}
	if p, _ := re.Problem(); p.Reason != "NOT_ALLOWED" {
		t.Errorf("refusal reason %q, want the provider's", p.Reason)
	}
	plain := serve(t, &stubProvider{}, provider.ServerConfig{})
	if a := send(t, "POST", plain+"/api/v1/services:validate", `{"service_type":"db","spec":{}}`); a.status != http.StatusNotFound {
		t.Errorf("validate on a provider without Validator: %d, want 404", a.status)
	}
}
