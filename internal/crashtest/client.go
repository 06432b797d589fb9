package crashtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The kinds of request a client sends.
const (
	kindCreate    = "create"
	kindRehydrate = "rehydrate"
	kindRotate    = "rotate"
	kindUpdate    = "update"
	kindDelete    = "delete"
)

// revLabel is the order label each update (PATCH) sets to a value of its
// own, so the checks can tell which update an order holds.
const revLabel = "crashtest_rev"

// keyLabel is the order label that carries its create's Idempotency-Key,
// so the orders a key made can be counted.
const keyLabel = "crashtest_key"

// reasonKeyInUse answers a key whose first request is still in flight; it
// is not a final answer.
const reasonKeyInUse = "IDEMPOTENCY_KEY_IN_USE"

// reasonOrderExists answers a create whose ?id= is taken.
const reasonOrderExists = "ORDER_EXISTS"

// maxServerErrors is how many 5xx answers that are not replays a request
// takes before a 5xx counts as its final answer.
const maxServerErrors = 3

// request is one logical request of a client and what became of it, over
// all its attempts (each with the same key and body).
type request struct {
	Kind string
	// Key is the Idempotency-Key ("" for a delete or an update).
	Key string
	// OrderID is the order acted on; for a create, the ?id= asked for, or
	// the id of the answer.
	OrderID string
	// WithID is set on a create sent with ?id=.
	WithID bool
	Method string
	Path   string
	Body   []byte
	// Rev is the value of revLabel an update sets.
	Rev string
	// Client numbers the client that sent it.
	Client   int
	Attempts int
	// Sent is when the first attempt went out.
	Sent time.Time
	// Last is the last outcome that was not final ("connection refused",
	// "409 IDEMPOTENCY_KEY_IN_USE").
	Last string
	// Final is the final answer; nil while there is none.
	Final *Answer
}

// acked returns the order a create's final answer acknowledges: the id of
// a 2xx, or for a ?id= create retried after an unknown outcome, the id a
// 409 ORDER_EXISTS says exists. It returns "" otherwise.
func (r *request) acked() string {
	switch {
	case r.Kind != kindCreate || r.Final == nil:
		return ""
	case r.Final.ok():
		return r.Final.ID
	case r.resolvedByExists():
		return r.OrderID
	}
	return ""
}

// resolvedByExists reports a ?id= create whose retry found its order made.
func (r *request) resolvedByExists() bool {
	return r.Kind == kindCreate && r.WithID && r.Final != nil && r.Final.Status == http.StatusConflict &&
		r.Final.Reason == reasonOrderExists && r.Attempts > 1
}

// describe names the request in a violation: "create ?id=o-1-4 (key k)".
func (r *request) describe() string {
	switch r.Kind {
	case kindCreate:
		if r.WithID {
			return fmt.Sprintf("create ?id=%s (key %s)", r.OrderID, r.Key)
		}
		return fmt.Sprintf("create without id (key %s)", r.Key)
	case kindRehydrate:
		return fmt.Sprintf("rehydrate of order %s (key %s)", r.OrderID, r.Key)
	case kindRotate:
		return fmt.Sprintf("rotation of order %s's credentials (key %s)", r.OrderID, r.Key)
	case kindUpdate:
		return fmt.Sprintf("update of order %s to %s=%s", r.OrderID, revLabel, r.Rev)
	}
	return "DELETE of order " + r.OrderID
}

// client is one load goroutine: it creates orders, and rehydrates and
// deletes the ones it created. Its requests are read by the checker while
// it runs, under mu.
type client struct {
	n        int
	t        *trial
	api      *api
	rng      *rand.Rand
	interval time.Duration

	mu       sync.Mutex
	requests []*request
	// live are the orders it created and has not sent a delete for.
	live []string
}

// run sends requests until loadCtx ends, each retried until its final
// answer or until answerCtx ends.
func (c *client) run(loadCtx, answerCtx context.Context) {
	for n := 0; loadCtx.Err() == nil; n++ {
		c.step(answerCtx, n)
		_ = pause(loadCtx, c.interval/2+rand.N(c.interval+1))
	}
}

func (c *client) step(ctx context.Context, n int) {
	c.mu.Lock()
	live := slices.Clone(c.live)
	c.mu.Unlock()
	r := c.rng.Float64()
	switch {
	case len(live) < 3 || r < 0.5:
		c.create(ctx, n)
	case r < 0.62:
		c.rehydrate(ctx, n, live[c.rng.IntN(len(live))])
	case r < 0.7:
		c.rotate(ctx, n, live[c.rng.IntN(len(live))])
	case r < 0.8:
		c.update(ctx, n, live[c.rng.IntN(len(live))])
	default:
		c.delete(ctx, live[c.rng.IntN(len(live))])
	}
}

func (c *client) create(ctx context.Context, n int) {
	key := fmt.Sprintf("%s-c%d-%d", c.t.tag, c.n, n)
	req := &request{Kind: kindCreate, Key: key, Method: http.MethodPost, Path: "/api/v1/catalog-item-instances",
		WithID: n%2 == 0, Client: c.n}
	if req.WithID {
		req.OrderID = fmt.Sprintf("o-c%d-%d", c.n, n)
		req.Path += "?id=" + req.OrderID
	}
	item := catalogItemID
	if c.t.adapter != nil && c.rng.IntN(adaptedOneIn) == 0 {
		item = adaptedItem
	}
	req.Body, _ = json.Marshal(map[string]any{"catalog_item_id": item, "labels": map[string]string{keyLabel: key}})
	c.t.creates.Add(1)
	c.send(ctx, req)
	c.mu.Lock()
	defer c.mu.Unlock()
	if req.Final != nil && req.Final.ok() && !req.WithID {
		req.OrderID = req.Final.ID
	}
	if id := req.acked(); id != "" {
		c.live = append(c.live, id)
	}
}

func (c *client) rehydrate(ctx context.Context, n int, order string) {
	c.send(ctx, &request{Kind: kindRehydrate, Key: fmt.Sprintf("%s-c%d-%d", c.t.tag, c.n, n), OrderID: order,
		Method: http.MethodPost, Path: "/api/v1/catalog-item-instances/" + url.PathEscape(order) + ":rehydrate",
		Client: c.n})
}

// rotate asks for a rotation of the order's credentials; 409
// ROTATION_IN_PROGRESS (one is running) and ORDER_NOT_PLACED are final
// answers like any 4xx.
func (c *client) rotate(ctx context.Context, n int, order string) {
	c.send(ctx, &request{Kind: kindRotate, Key: fmt.Sprintf("%s-c%d-%d", c.t.tag, c.n, n), OrderID: order,
		Method: http.MethodPost, Path: "/api/v1/catalog-item-instances/" + url.PathEscape(order) + ":rotateCredentials",
		Client: c.n})
}

// update sets the order's revLabel to a value no other update sets
// (labels alone change without a transfer, in any state but deleting). It
// carries no Idempotency-Key, which the API takes on POSTs only: setting a
// label to a value is idempotent by itself.
func (c *client) update(ctx context.Context, n int, order string) {
	req := &request{Kind: kindUpdate, OrderID: order,
		Rev: fmt.Sprintf("c%d-%d", c.n, n), Method: http.MethodPatch,
		Path: "/api/v1/catalog-item-instances/" + url.PathEscape(order), Client: c.n}
	req.Body, _ = json.Marshal(map[string]any{"labels": map[string]string{revLabel: req.Rev}})
	c.send(ctx, req)
}

func (c *client) delete(ctx context.Context, order string) {
	c.mu.Lock()
	c.live = slices.DeleteFunc(c.live, func(id string) bool { return id == order })
	c.mu.Unlock()
	c.send(ctx, &request{Kind: kindDelete, OrderID: order, Method: http.MethodDelete,
		Path: "/api/v1/catalog-item-instances/" + url.PathEscape(order), Client: c.n})
}

// send records req, then sends it until it gets a final answer or ctx ends.
func (c *client) send(ctx context.Context, req *request) {
	req.Sent = time.Now()
	c.mu.Lock()
	c.requests = append(c.requests, req)
	c.mu.Unlock()
	serverErrors := 0
	for {
		c.t.inFlight.Add(1)
		ans, _, err := c.api.do(ctx, req.Method, req.Path, req.Key, req.Body)
		c.t.inFlight.Add(-1)
		final := false
		wait := 100 * time.Millisecond
		c.mu.Lock()
		req.Attempts++
		switch {
		case err != nil && ctx.Err() != nil:
			// Given up: the last real outcome stays.
			req.Attempts--
		case err != nil:
			req.Last = "no answer: " + shortError(err)
			c.t.noAnswer.Add(1)
			wait = 20 * time.Millisecond
		case ans.Status == http.StatusConflict && ans.Reason == reasonKeyInUse:
			req.Last = ans.String()
			c.t.inUse.Add(1)
		case ans.Status >= 500 && !ans.Replayed && serverErrors < maxServerErrors:
			serverErrors++
			req.Last = ans.String()
		default:
			final = true
			req.Final = &ans
		}
		c.mu.Unlock()
		if final {
			if ans.ok() {
				c.t.noteSuccess(ans.At)
			}
			return
		}
		if pause(ctx, wait) != nil {
			return
		}
	}
}

// snapshot copies the client's requests.
func (c *client) snapshot() []request {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]request, len(c.requests))
	for i, r := range c.requests {
		out[i] = *r
		if r.Final != nil {
			f := *r.Final
			out[i].Final = &f
		}
	}
	return out
}

// shortError drops the URL from a transport error: "connection refused".
func shortError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.Contains(s, "dial tcp") {
		s = s[i+2:]
	}
	return s
}
