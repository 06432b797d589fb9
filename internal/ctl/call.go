package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/stewardhq/steward/pkg/client"
)

// maxAnswer bounds what the client reads of one answer.
const maxAnswer = 64 << 20

// call makes one request and returns the body of a 2xx answer; any other
// answer is a *client.ProblemError, and a server out of reach says how to
// point at another.
func (c *conn) call(ctx context.Context, do func(context.Context, client.ClientInterface) (*http.Response, error)) ([]byte, *http.Response, error) {
	rsp, err := do(ctx, c.api)
	if err != nil {
		return nil, nil, c.transportError(err)
	}
	defer rsp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(rsp.Body, maxAnswer))
	if err != nil {
		return nil, rsp, c.transportError(err)
	}
	if err := client.Check(rsp, body); err != nil {
		c.explainUnknownRoute(ctx, err)
		return body, rsp, err
	}
	return body, rsp, nil
}

// transportError explains a request that got no answer.
func (c *conn) transportError(err error) error {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return fmt.Errorf("cannot reach the Steward server at %s (is `steward server` running there? --server or STEWARD_SERVER points elsewhere): %w",
			c.server, opErr.Err)
	}
	return fmt.Errorf("request to %s: %w", c.server, err)
}

// getObject reads one resource.
func (c *conn) getObject(ctx context.Context, k *kind, id string) (object, error) {
	if k.get == nil {
		return object{}, usagef("%s cannot be read one at a time; use: steward get %s", k.name, k.name)
	}
	if err := checkKindID(k, id); err != nil {
		return object{}, err
	}
	body, _, err := c.call(ctx, func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
		return k.get(ctx, api, id)
	})
	if err != nil {
		return object{}, err
	}
	return decodeObject(body)
}

// listQuery is what a list asks for besides the collection.
type listQuery struct {
	// filters become query parameters as they are (state=up, label=env:prod).
	filters url.Values
	// limit stops after this many results; 0 reads every page.
	limit int
}

// pageSize is the page the client asks for when reading a whole collection.
const pageSize = 500

// listObjects reads a collection, following next_page_token.
func (c *conn) listObjects(ctx context.Context, k *kind, q listQuery) ([]object, error) {
	var objs []object
	token := ""
	for {
		size := pageSize
		if q.limit > 0 {
			size = min(size, q.limit-len(objs))
		}
		query := func(_ context.Context, req *http.Request) error {
			v := req.URL.Query()
			for name, values := range q.filters {
				v[name] = append(v[name], values...)
			}
			v.Set("max_page_size", strconv.Itoa(size))
			if token != "" {
				v.Set("page_token", token)
			}
			req.URL.RawQuery = v.Encode()
			return nil
		}
		body, _, err := c.call(ctx, func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
			return k.list(ctx, api, query)
		})
		if err != nil {
			return nil, err
		}
		var page struct {
			Results       []json.RawMessage `json:"results"`
			NextPageToken string            `json:"next_page_token"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, fmt.Errorf("the server's list answer: %w", err)
		}
		for _, raw := range page.Results {
			o, err := decodeObject(raw)
			if err != nil {
				return nil, err
			}
			objs = append(objs, o)
		}
		token = page.NextPageToken
		if token == "" || (q.limit > 0 && len(objs) >= q.limit) {
			return objs, nil
		}
	}
}
