package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// defaultTimeout bounds each call when its config leaves the timeout zero.
const defaultTimeout = 10 * time.Second

// request is one HTTP call of [Client] to a provider. Calls to Steward go
// through pkg/client instead ([stewardAPI]).
type request struct {
	method string
	url    string
	token  string
	// idempotencyKey, when set, is sent as the Idempotency-Key header.
	idempotencyKey string
	// body, when not nil, is sent as JSON.
	body any
}

// answer is the other side's answer to a request.
type answer struct {
	status int
	header http.Header
	// body is at most maxBody bytes; tooLarge says there was more.
	body     []byte
	tooLarge bool
	// fromProvider is set on the answers of [Client] calls: a provider's,
	// or whatever server its endpoint names.
	fromProvider bool
}

func (a answer) ok() bool { return a.status >= 200 && a.status <= 299 }

// responseError returns the ResponseError for a non-2xx answer.
func (a answer) responseError() *ResponseError {
	e := &ResponseError{StatusCode: a.status, Body: a.body, bodyUnsaid: a.fromProvider}
	if s, err := strconv.Atoi(strings.TrimSpace(a.header.Get("Retry-After"))); err == nil && s > 0 {
		e.retryAfter = time.Duration(s) * time.Second
	}
	return e
}

// decode unmarshals a 2xx answer's body into dst, or says why it cannot.
func (a answer) decode(dst any) error {
	if dst == nil {
		return nil // an answer without a body of use (204)
	}
	if a.tooLarge {
		return fmt.Errorf("%w: the body is larger than 1 MiB", ErrInvalidResponse)
	}
	if err := json.Unmarshal(a.body, dst); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidResponse, err)
	}
	return nil
}

// accept is the Accept header of every call: the answers the package reads.
const accept = "application/json, application/problem+json"

// do sends req with hc (nil for a default client), never following a
// redirect, within its own timeout derived from ctx, and reads the answer
// as [exchange] does. [Client] calls providers with it.
func do(ctx context.Context, hc *http.Client, timeout time.Duration, req request) (answer, error) {
	var body []byte
	if req.body != nil {
		b, err := json.Marshal(req.body)
		if err != nil {
			return answer{}, fmt.Errorf("encode request: %w", err)
		}
		body = b
	}
	a, err := exchange(ctx, timeout, func(callCtx context.Context) (*http.Response, error) {
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		hr, err := http.NewRequestWithContext(callCtx, req.method, req.url, r)
		if err != nil {
			return nil, err
		}
		hr.Header.Set("Accept", accept)
		if body != nil {
			hr.Header.Set("Content-Type", "application/json")
		}
		if req.token != "" {
			hr.Header.Set("Authorization", "Bearer "+req.token)
		}
		if req.idempotencyKey != "" {
			hr.Header.Set("Idempotency-Key", req.idempotencyKey)
		}
		return newSender(hc).Do(hr)
	})
	a.fromProvider = true
	return a, err
}

// exchange makes one call within its own timeout derived from ctx: send
// builds the request with the ctx it is given and sends it through a
// [sender], and exchange reads the answer, at most maxBody bytes of its
// body. A transport failure (one the sender marked) comes back classified:
// wrapping [ErrTimeout], [ErrUnreachable], or ctx's error when the caller
// cancelled. Any other error of send is a request that could not be built.
func exchange(ctx context.Context, timeout time.Duration, send func(callCtx context.Context) (*http.Response, error)) (answer, error) {
	callCtx, cancel := context.WithTimeout(ctx, cmpDuration(timeout, defaultTimeout))
	defer cancel()
	resp, err := send(callCtx)
	if err != nil {
		var te *transportError
		if !errors.As(err, &te) {
			return answer{}, fmt.Errorf("build request: %w", err)
		}
		return answer{}, classify(ctx, callCtx, te.err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return answer{}, classify(ctx, callCtx, err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, body: b}
	if len(b) > maxBody {
		a.body, a.tooLarge = b[:maxBody], true
	}
	return a, nil
}

// sender sends requests with noRedirects(hc) and marks its failures as
// [transportError]s, so that [exchange] classifies those alone: a request
// the generated client of pkg/client cannot build fails before it is sent,
// and must not read as unreachable, which is retried. It is the
// HttpRequestDoer the package gives that client.
type sender struct{ hc *http.Client }

// newSender returns the sender of hc (nil for a default client).
func newSender(hc *http.Client) sender { return sender{hc: noRedirects(hc)} }

// Do sends r.
func (s sender) Do(r *http.Request) (*http.Response, error) {
	resp, err := s.hc.Do(r)
	if err != nil {
		return nil, &transportError{err: err}
	}
	return resp, nil
}

// transportError is a failure of the transport, before an answer came.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// classify wraps a transport error with what the caller can branch on.
// NOTE: a dial failure is checked before timeouts, so a host that never
// answers the handshake reads as unreachable, not as a slow provider.
func classify(ctx, callCtx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("%w: %w", context.Canceled, err)
	}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	if errors.As(err, &dnsErr) || (errors.As(err, &opErr) && opErr.Op == "dial") {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	var netErr net.Error
	if callCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return fmt.Errorf("%w: %w", ErrUnreachable, err)
}

// defaultTransport is http.DefaultTransport keeping up to 256 idle
// connections per host instead of 2: a provider reporting many statuses at
// once, or a Steward calling one provider from many workers, otherwise
// closes and dials a connection per call (7% of a server's CPU under
// create load).
var defaultTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	return t
}()

// noRedirects returns a copy of hc (or of a default client) that answers a
// redirect as it is: following one would resend a create, and the bearer
// token, to an address nobody configured.
func noRedirects(hc *http.Client) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	}
	if c.Transport == nil {
		c.Transport = defaultTransport
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// joinURL appends path to base, an http or https URL that may carry a path
// prefix and a trailing slash.
func joinURL(base, path string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("base URL %q: must be an absolute http or https URL", base)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("base URL %q: must have no query or fragment", base)
	}
	return strings.TrimRight(base, "/") + path, nil
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
