package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// OperationValidate is the entry of [Registration.Operations] that says a
// provider checks a spec before anything is made of it (it implements
// [Validator]).
const OperationValidate = "validate"

// validateSuffix follows the services path: POST /api/v1/services:validate.
const validateSuffix = ":validate"

// Validator is implemented by a [Provider] that can tell whether it would
// accept a spec, so that Steward refuses an order at once (400) rather than
// failing it after it was placed: POST /api/v1/services:validate with a
// [CreateRequest] whose InstanceID may be empty. Validate makes nothing; it
// returns nil for a spec Create would accept, and the refusal Create would
// answer (an error with HTTPStatus() 4xx, such as [*HTTPError]) otherwise.
type Validator interface {
	Validate(ctx context.Context, req CreateRequest) error
}

func (s *server) validate(w http.ResponseWriter, r *http.Request) {
	var req CreateRequest
	if !s.decode(w, r, &req) {
		return
	}
	if req.ServiceType == "" {
		s.problem(w, r, http.StatusBadRequest, "INVALID_ARGUMENT", "service_type required")
		return
	}
	if err := s.validator.Validate(r.Context(), req); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Validate asks the provider at endpoint whether it would accept req: POST
// {endpoint}/api/v1/services:validate. Call it only for a provider
// registered with [OperationValidate]. nil means it would; a
// [*ResponseError] with a 4xx status is its refusal; any other error says
// nothing of the spec (see [Client]).
func (c *Client) Validate(ctx context.Context, endpoint string, req CreateRequest) error {
	if req.ServiceType == "" {
		return errors.New("validate: service_type is required")
	}
	u, err := joinURL(endpoint, servicesPath+validateSuffix)
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	a, err := do(ctx, c.hc, c.timeout, request{method: http.MethodPost, url: u, token: c.tokenFor(ctx), body: req})
	if err == nil && !a.ok() {
		err = a.responseError()
	}
	if err != nil {
		return fmt.Errorf("validate a %s spec at %s: %w", req.ServiceType, endpoint, err)
	}
	return nil
}
