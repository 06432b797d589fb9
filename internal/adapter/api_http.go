package adapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
)

// maxAnswer bounds how much of an answer HTTPAPI reads: an order is a few
// kilobytes, and a runaway body must not exhaust the adapter's memory.
const maxAnswer = 8 << 20

// HTTPAPI is the [API] over HTTP. It is safe for concurrent use if Client
// is (http.Client is).
type HTTPAPI struct {
	// BaseURL is the Steward server's URL, such as https://steward:8080;
	// paths are appended to it.
	BaseURL string
	// BaseURLs are more URLs of the same Steward (its replicas), tried
	// after BaseURL. A call goes to the one that answered last, and moves
	// on to the next when it cannot connect there: the request was then
	// never sent, so sending it elsewhere does not do it twice.
	BaseURLs []string
	// Token, when set, is sent as Authorization: Bearer <Token>.
	Token string
	// Client defaults to http.DefaultClient. Give it no overall Timeout if
	// api_call timeouts should rule: each call has its own ctx deadline.
	Client *http.Client

	// current indexes urls() at the one that answered last.
	current atomic.Int32
}

// urls is BaseURL then BaseURLs, without empty ones.
func (a *HTTPAPI) urls() []string {
	var out []string
	for _, u := range append([]string{a.BaseURL}, a.BaseURLs...) {
		if u != "" {
			out = append(out, u)
		}
	}
	return out
}

// Do sends one request and returns the answer's status and body (up to
// 8 MiB); err is only for a request that got no answer. With several URLs
// it tries each in turn, from the last that answered, while it cannot
// connect.
func (a *HTTPAPI) Do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	urls := a.urls()
	if len(urls) == 0 {
		return 0, nil, errors.New("adapter: no Steward URL")
	}
	start := int(a.current.Load())
	var err error
	for i := range urls {
		n := (start + i) % len(urls)
		var status int
		var answer []byte
		status, answer, err = a.do(ctx, urls[n], method, path, body)
		if err == nil {
			a.current.Store(int32(n))
			return status, answer, nil
		}
		if !cannotConnect(err) || ctx.Err() != nil {
			break
		}
	}
	return 0, nil, err
}

// cannotConnect reports whether err is a failure to reach the server at all
// (no connection, no name): the request was not sent.
func cannotConnect(err error) bool {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	return errors.As(err, &dnsErr) || (errors.As(err, &opErr) && opErr.Op == "dial")
}

func (a *HTTPAPI) do(ctx context.Context, base, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(base, "/")+path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.Token != "" {
		req.Header.Set("Authorization", "Bearer "+a.Token)
	}
	client := a.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return 0, nil, fmt.Errorf("read answer to %s %s: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}
