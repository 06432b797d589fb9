package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Answer is what Steward answered a request: its status, the problem's
// reason, whether it was a replay, and the id in the body (an order's, an
// operation's).
type Answer struct {
	Status   int
	Reason   string
	Replayed bool
	ID       string
	// InstanceID is the body's instance_id: an order's current instance.
	InstanceID string
	// At is when the answer arrived.
	At time.Time
}

// String is "201", "409 ORDER_EXISTS", "201 replayed".
func (a Answer) String() string {
	s := fmt.Sprint(a.Status)
	if a.Reason != "" {
		s += " " + a.Reason
	}
	if a.Replayed {
		s += " replayed"
	}
	return s
}

// ok reports a 2xx.
func (a Answer) ok() bool { return a.Status >= 200 && a.Status < 300 }

// api talks to Steward: to one of its replicas' base URLs, moving on to the
// next after a request gets no answer, as a client behind a load balancer
// does. It is safe for concurrent use.
type api struct {
	bases []string
	hc    *http.Client
	// current indexes the base the next request goes to.
	current atomic.Int32
}

func newAPI(bases []string, timeout time.Duration) *api {
	return &api{bases: bases, hc: &http.Client{Timeout: timeout, Transport: newTransport()}}
}

// from returns an api on the same connections that starts at base i: the
// clients spread over the replicas.
func (a *api) from(i int) *api {
	b := &api{bases: a.bases, hc: a.hc}
	b.current.Store(int32(i % len(a.bases)))
	return b
}

// do sends one request and reads the whole answer; an answer cut off by a
// kill is an error, as is no answer at all.
func (a *api) do(ctx context.Context, method, path, key string, body []byte) (Answer, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	at := a.current.Load()
	req, err := http.NewRequestWithContext(ctx, method, a.bases[at]+path, rd)
	if err != nil {
		return Answer{}, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		a.next(at)
		return Answer{}, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		a.next(at)
		return Answer{}, nil, err
	}
	ans := Answer{Status: resp.StatusCode, Replayed: resp.Header.Get("Idempotent-Replayed") == "true", At: time.Now()}
	var probe struct {
		ID         string `json:"id"`
		Reason     string `json:"reason"`
		InstanceID string `json:"instance_id"`
	}
	if json.Unmarshal(b, &probe) == nil {
		ans.ID, ans.Reason, ans.InstanceID = probe.ID, probe.Reason, probe.InstanceID
	}
	return ans, b, nil
}

// next moves on from base at, unless another request did already.
func (a *api) next(at int32) {
	a.current.CompareAndSwap(at, (at+1)%int32(len(a.bases)))
}

// send is do for a JSON body v (nil: no body), failing on anything but a 2xx.
func (a *api) send(ctx context.Context, method, path string, v any, dst any) error {
	var body []byte
	if v != nil {
		var err error
		if body, err = json.Marshal(v); err != nil {
			return err
		}
	}
	ans, b, err := a.do(ctx, method, path, "", body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if !ans.ok() {
		return fmt.Errorf("%s %s: answered %d: %s", method, path, ans.Status, strings.TrimSpace(string(b)))
	}
	if dst != nil {
		if err := json.Unmarshal(b, dst); err != nil {
			return fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return nil
}

// list reads every page of a collection (API.md's list shape).
func list[T any](ctx context.Context, a *api, path string, query url.Values) ([]T, error) {
	var all []T
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("max_page_size", "1000")
	for {
		var page struct {
			Results       []T    `json:"results"`
			NextPageToken string `json:"next_page_token"`
		}
		if err := a.send(ctx, http.MethodGet, path+"?"+q.Encode(), nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Results...)
		if page.NextPageToken == "" {
			return all, nil
		}
		q.Set("page_token", page.NextPageToken)
	}
}

// close drops the idle connections, and with them their goroutines.
func (a *api) close() { a.hc.CloseIdleConnections() }
