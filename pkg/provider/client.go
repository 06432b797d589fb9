package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// ClientConfig configures a [Client]. The zero value is a valid
// configuration.
type ClientConfig struct {
	// HTTPClient sends the calls. Defaults to a client on a clone of
	// http.DefaultTransport that keeps up to 256 idle connections per
	// host. Its CheckRedirect is ignored: the Client never follows
	// redirects.
	HTTPClient *http.Client
	// Timeout bounds each call, from sending the request to reading the
	// whole answer, within the ctx the caller passes. Defaults to 10s.
	Timeout time.Duration
	// Token, when set, is sent as "Authorization: Bearer <token>" on every
	// call (see [ServerConfig.Token]) whose ctx carries none of its own
	// ([WithCallToken]). Defaults to none.
	Token string
}

type callTokenKey struct{}

// WithCallToken returns a ctx whose [Client] calls present token to the
// provider instead of [ClientConfig.Token]: the secret that provider
// agreed with Steward in its registration ([Registration.CallToken]).
// An empty token leaves ctx as it is.
func WithCallToken(ctx context.Context, token string) context.Context {
	if token == "" {
		return ctx
	}
	return context.WithValue(ctx, callTokenKey{}, token)
}

// tokenFor is the token a call under ctx presents.
func (c *Client) tokenFor(ctx context.Context) string {
	if t, ok := ctx.Value(callTokenKey{}).(string); ok {
		return t
	}
	return c.token
}

// Client is how Steward calls providers over the wire contract (API.md,
// "Provider-side contract"). Build one with [NewClient]; the zero value
// works as NewClient(ClientConfig{}). It is safe for concurrent use. Each method takes the provider's endpoint, its base URL
// ("http://127.0.0.1:9001", a path prefix allowed), so one Client serves
// every provider.
//
// Each call's error tells what is known of its outcome:
//
//   - nil: the provider answered 2xx; the Instance is its answer.
//   - a [*ResponseError] (errors.As): the provider answered another status.
//     A 4xx is a refusal: nothing was done. A 5xx is a failure; since every
//     Provider method is idempotent, the call may be repeated.
//   - [ErrNotFound] (errors.Is, from Get, Update and Delete, together with
//     the 404 ResponseError): the provider does not hold the instance; for
//     Delete this means it is gone, which is success.
//   - [ErrTimeout] or [ErrUnreachable] (errors.Is): the outcome is unknown.
//     The request may have reached the provider and been acted on, so after
//     a Create or Delete the instance may or may not exist, and after an
//     Update it may run either spec. Repeat the call
//     (it is idempotent) or ask with Get before concluding anything.
//   - [ErrInvalidResponse]: the provider answered 2xx with a body that
//     breaks the contract; it acted, but the resulting state is unknown.
//   - ctx's error, when the caller cancelled: unknown outcome as well.
type Client struct {
	hc      *http.Client
	timeout time.Duration
	token   string
}

// NewClient returns a Client with cfg's defaults filled.
func NewClient(cfg ClientConfig) *Client {
	return &Client{
		hc:      cfg.HTTPClient,
		timeout: cmpDuration(cfg.Timeout, defaultTimeout),
		token:   cfg.Token,
	}
}

// Create asks the provider at endpoint to realise req: POST
// {endpoint}/api/v1/services with the Idempotency-Key header set to
// req.InstanceID. It may be repeated safely with the same request. It
// returns an error (not sent) when req lacks its instance id or service
// type, and otherwise the errors of [Client].
func (c *Client) Create(ctx context.Context, endpoint string, req CreateRequest) (Instance, error) {
	if req.InstanceID == "" || req.ServiceType == "" {
		return Instance{}, errors.New("create instance: instance_id and service_type are required")
	}
	inst, err := c.instanceCall(ctx, endpoint, http.MethodPost, req.InstanceID, request{
		idempotencyKey: req.InstanceID,
		body:           req,
	})
	if err != nil {
		return Instance{}, fmt.Errorf("create instance %q at %s: %w", req.InstanceID, endpoint, err)
	}
	return inst, nil
}

// Get returns the provider's view of instance id: GET
// {endpoint}/api/v1/services/{id}. It returns an error wrapping
// [ErrNotFound] when the provider answers 404, and otherwise the errors of
// [Client].
func (c *Client) Get(ctx context.Context, endpoint, id string) (Instance, error) {
	inst, err := c.instanceCall(ctx, endpoint, http.MethodGet, id, request{})
	if err != nil {
		return Instance{}, fmt.Errorf("get instance %q from %s: %w", id, endpoint, err)
	}
	return inst, nil
}

// Update asks the provider to change instance req.InstanceID in place to
// req's spec: PUT {endpoint}/api/v1/services/{instance_id} with
// {"service_type","spec"}. Call it only for a provider registered with
// [OperationUpdate]; one without answers 405, a [*ResponseError]. The answer
// is usually PROVISIONING, and RUNNING or FAILED for the new spec follows as
// a status report. Update is idempotent by contract (updating to the spec an
// instance already has changes nothing), so it sends no Idempotency-Key and
// may be repeated safely. It returns an error (not sent) when req lacks its
// instance id or service type, an error wrapping [ErrNotFound] when the
// provider answers 404, and otherwise the errors of [Client].
func (c *Client) Update(ctx context.Context, endpoint string, req UpdateRequest) (Instance, error) {
	if req.InstanceID == "" || req.ServiceType == "" {
		return Instance{}, errors.New("update instance: instance_id and service_type are required")
	}
	inst, err := c.instanceCall(ctx, endpoint, http.MethodPut, req.InstanceID, request{body: req})
	if err != nil {
		return Instance{}, fmt.Errorf("update instance %q at %s: %w", req.InstanceID, endpoint, err)
	}
	return inst, nil
}

// Delete asks the provider to delete instance id: DELETE
// {endpoint}/api/v1/services/{id}. The answer's status is DELETED when it
// is gone, usually DELETING when the provider will report DELETED later. A
// 2xx without a body counts as DELETED (200, 204) or DELETING (202). It
// returns an error wrapping [ErrNotFound] when the provider answers 404,
// meaning the instance is already gone, and otherwise the errors of [Client].
//
// NOTE: per the contract, a 404 is read as "gone" even when a misconfigured
// endpoint answers it for an unknown route; the provider's own 404 carries
// the reason INSTANCE_NOT_FOUND in its problem body, if a caller must be sure.
func (c *Client) Delete(ctx context.Context, endpoint, id string) (Instance, error) {
	inst, err := c.instanceCall(ctx, endpoint, http.MethodDelete, id, request{})
	if err != nil {
		return Instance{}, fmt.Errorf("delete instance %q at %s: %w", id, endpoint, err)
	}
	return inst, nil
}

// Health asks the provider whether it can serve: GET {endpoint}/api/v1/health.
// A nil error means the provider is reachable; the Health then says whether
// its backend works ([HealthHealthy] or [HealthUnhealthy]). A
// [*ResponseError] means it answered but not with a Health (count it as
// unhealthy); [ErrTimeout] and [ErrUnreachable] mean it is unreachable.
func (c *Client) Health(ctx context.Context, endpoint string) (Health, error) {
	u, err := joinURL(endpoint, healthPath)
	if err != nil {
		return Health{}, fmt.Errorf("check health: %w", err)
	}
	a, err := do(ctx, c.hc, c.timeout, request{method: http.MethodGet, url: u, token: c.tokenFor(ctx)})
	if err == nil && !a.ok() {
		err = a.responseError()
	}
	var h Health
	if err == nil {
		err = a.decode(&h)
	}
	if err == nil && h.Status != HealthHealthy && h.Status != HealthUnhealthy {
		err = fmt.Errorf("%w: health status %q", ErrInvalidResponse, h.Status)
	}
	if err != nil {
		return Health{}, fmt.Errorf("check health of %s: %w", endpoint, err)
	}
	return h, nil
}

// instanceCall sends req to the service path of id and decodes the Instance
// it answers, checking it is the instance asked for.
func (c *Client) instanceCall(ctx context.Context, endpoint, method, id string, req request) (Instance, error) {
	if id == "" {
		return Instance{}, errors.New("instance id is required")
	}
	path := servicesPath
	if method != http.MethodPost {
		path += "/" + url.PathEscape(id)
	}
	u, err := joinURL(endpoint, path)
	if err != nil {
		return Instance{}, err
	}
	req.method, req.url, req.token = method, u, c.tokenFor(ctx)
	a, err := do(ctx, c.hc, c.timeout, req)
	switch {
	case err != nil:
		return Instance{}, err
	case a.status == http.StatusNotFound && method != http.MethodPost:
		return Instance{}, fmt.Errorf("%w: %w", ErrNotFound, a.responseError())
	case !a.ok():
		return Instance{}, a.responseError()
	case method == http.MethodDelete && len(a.body) == 0:
		if a.status == http.StatusAccepted {
			return Instance{InstanceID: id, Status: StatusDeleting}, nil
		}
		return Instance{InstanceID: id, Status: StatusDeleted}, nil
	}
	var inst Instance
	if err := a.decode(&inst); err != nil {
		return Instance{}, err
	}
	if inst.InstanceID == "" {
		inst.InstanceID = id
	}
	if inst.InstanceID != id {
		return Instance{}, fmt.Errorf("%w: answered for instance %q", ErrInvalidResponse, inst.InstanceID)
	}
	if !inst.Status.Valid() {
		return Instance{}, fmt.Errorf("%w: instance status %q", ErrInvalidResponse, inst.Status)
	}
	return inst, nil
}

// Repair hands a repair operation to the provider that owns its instance:
// POST {endpoint}/api/v1/services/{instance_id}/repair with the
// Idempotency-Key header set to req.OperationID, so a redelivery starts
// nothing new. Call it only for a provider registered with
// [OperationRepair]. It returns an error (not sent) when req lacks its
// instance or operation id, an error wrapping [ErrNotFound] when the
// provider answers 404, and otherwise the errors of [Client].
func (c *Client) Repair(ctx context.Context, endpoint string, req RepairRequest) (RepairAccepted, error) {
	if req.InstanceID == "" || req.OperationID == "" {
		return RepairAccepted{}, errors.New("repair: instance and operation ids are required")
	}
	u, err := joinURL(endpoint, servicesPath+"/"+url.PathEscape(req.InstanceID)+repairSuffix)
	if err != nil {
		return RepairAccepted{}, fmt.Errorf("repair %q: %w", req.InstanceID, err)
	}
	a, err := do(ctx, c.hc, c.timeout, request{method: http.MethodPost, url: u, token: c.tokenFor(ctx),
		idempotencyKey: req.OperationID, body: req})
	switch {
	case err != nil:
	case a.status == http.StatusNotFound:
		err = fmt.Errorf("%w: %w", ErrNotFound, a.responseError())
	case !a.ok():
		err = a.responseError()
	}
	var acc RepairAccepted
	if err == nil {
		err = a.decode(&acc)
	}
	if err != nil {
		return RepairAccepted{}, fmt.Errorf("repair %q (operation %s) at %s: %w", req.InstanceID, req.OperationID, endpoint, err)
	}
	return acc, nil
}

// Credentials asks the provider for an instance's credentials: GET
// {endpoint}/api/v1/services/{id}/credentials. Call it only for a provider
// registered with [OperationCredentials], with its call token
// ([WithCallToken]). It returns an error wrapping [ErrNotFound] when the
// provider answers 404, and otherwise the errors of [Client]. The answer is
// a secret: log none of it.
func (c *Client) Credentials(ctx context.Context, endpoint, id string) (Credentials, error) {
	var cr Credentials
	err := c.instanceSubCall(ctx, endpoint, id, credentialsSuffix, request{method: http.MethodGet}, &cr)
	if err == nil && cr.InstanceID != id {
		err = fmt.Errorf("%w: answered for instance %q", ErrInvalidResponse, cr.InstanceID)
	}
	if err != nil {
		return Credentials{}, fmt.Errorf("credentials of instance %q from %s: %w", id, endpoint, err)
	}
	return cr, nil
}

// RotateCredentials asks the provider to replace an instance's credentials:
// POST {endpoint}/api/v1/services/{id}/credentials:rotate with the
// Idempotency-Key header set to req.OperationID, so a repeated request
// rotates once. It returns an error wrapping [ErrNotFound] when the
// provider answers 404, and otherwise the errors of [Client].
func (c *Client) RotateCredentials(ctx context.Context, endpoint string, req RotateRequest) (Rotated, error) {
	if req.OperationID == "" {
		return Rotated{}, errors.New("rotate credentials: operation id is required")
	}
	var rot Rotated
	err := c.instanceSubCall(ctx, endpoint, req.InstanceID, rotateSuffix,
		request{method: http.MethodPost, idempotencyKey: req.OperationID, body: req}, &rot)
	if err != nil {
		return Rotated{}, fmt.Errorf("rotate the credentials of instance %q at %s: %w", req.InstanceID, endpoint, err)
	}
	return rot, nil
}

// instanceSubCall sends req to suffix under instance id's path and decodes
// a 2xx answer into v.
func (c *Client) instanceSubCall(ctx context.Context, endpoint, id, suffix string, req request, v any) error {
	if id == "" {
		return errors.New("instance id is required")
	}
	u, err := joinURL(endpoint, servicesPath+"/"+url.PathEscape(id)+suffix)
	if err != nil {
		return err
	}
	req.url, req.token = u, c.tokenFor(ctx)
	a, err := do(ctx, c.hc, c.timeout, req)
	switch {
	case err != nil:
		return err
	case a.status == http.StatusNotFound:
		return fmt.Errorf("%w: %w", ErrNotFound, a.responseError())
	case !a.ok():
		return a.responseError()
	}
	return a.decode(v)
}
