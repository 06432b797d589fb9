package adapter

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
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
	// Token, when set, is sent as Authorization: Bearer <Token>.
	Token string
	// Client defaults to http.DefaultClient. Give it no overall Timeout if
	// api_call timeouts should rule: each call has its own ctx deadline.
	Client *http.Client
}

// Do sends one request and returns the answer's status and body (up to
// 8 MiB); err is only for a request that got no answer.
func (a *HTTPAPI) Do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(a.BaseURL, "/")+path, rd)
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
