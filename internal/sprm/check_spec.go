package sprm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/stewardhq/steward/pkg/provider"
)

// SpecRefusedError is a provider's refusal of a spec Steward asked it to
// check before acknowledging an order (the validate operation): the order
// is refused with 400, the provider's problem in provider_response.
type SpecRefusedError struct {
	Provider   string
	StatusCode int
	Body       []byte
}

func (e *SpecRefusedError) Error() string {
	msg := fmt.Sprintf("provider %q refuses the spec", e.Provider)
	if p, ok := providerBody(e.Body).(map[string]any); ok {
		if d, ok := p["detail"].(string); ok && d != "" {
			msg += ": " + d
		}
	}
	return msg
}

// HTTPStatus is 400 whatever 4xx the provider answered: the request's
// spec is at fault.
func (e *SpecRefusedError) HTTPStatus() int { return http.StatusBadRequest }

// ProblemFields carries the provider's answer.
func (e *SpecRefusedError) ProblemFields() map[string]any {
	return map[string]any{"provider_name": e.Provider, "provider_response": providerBody(e.Body)}
}

// CheckSpec asks the provider named whether it would accept spec, when it
// registered the validate operation: its refusal (a 4xx) is a
// *SpecRefusedError. Anything else (no such operation, the provider cannot
// be asked now) is nil: the create finds out later, as without a check.
func (s *Service) CheckSpec(ctx context.Context, providerName string, spec map[string]any) error {
	prov, err := s.Provider(ctx, providerName)
	if err != nil || !slices.Contains(prov.Operations, provider.OperationValidate) {
		return nil
	}
	serviceType, _ := spec["service_type"].(string)
	err = s.cfg.Providers.Validate(prov.calling(ctx), prov.Endpoint, provider.CreateRequest{ServiceType: serviceType, Spec: spec})
	var refused *provider.ResponseError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &refused) && refused.StatusCode >= 400 && refused.StatusCode < 500 &&
		refused.StatusCode != http.StatusUnauthorized && refused.StatusCode != http.StatusTooManyRequests:
		return &SpecRefusedError{Provider: prov.Name, StatusCode: refused.StatusCode, Body: refused.Body}
	}
	s.log.InfoContext(ctx, "spec not checked with its provider; the create will tell", "provider", prov.Name, "error", err)
	return nil
}
