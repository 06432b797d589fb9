package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"

	"github.com/stewardhq/steward/internal/invalid"
)

// outputOnly is what a create or update body may carry besides its own
// members: those the resource's answer has and the request does not take
// (path, create_time, etag, state, status…; AIP-203 output-only fields),
// accepted and ignored, so a resource read with GET can be sent back.
type outputOnly struct {
	members map[string]bool
	// namesID is true on a create that takes ?id= and whose body does
	// not take "id" itself: a body's "id" names the new resource when the
	// query does not, and must equal it when it does.
	namesID bool
	// immutable, on an update, are the members of the resource fixed at
	// create (its schema's x-steward-immutable), output-only or not: a
	// body naming one is checked against the resource (checkImmutable).
	immutable map[string]bool
}

// outputOnlyMembers works out a route's output-only members from the
// document: the top-level properties of its JSON answer (2xx) less those of
// its closed JSON request body. Routes that are not a create or an update
// of a resource (custom methods, open reports) have none.
func outputOnlyMembers(route *routers.Route) *outputOnly {
	switch route.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return nil
	}
	last := route.Path[strings.LastIndex(route.Path, "/")+1:]
	// A create is a POST to a collection (a path that lists); repair and
	// restart are POSTs of their own that start work.
	create := route.Method == http.MethodPost && route.PathItem.Get != nil && !strings.Contains(last, ":")
	update := route.Method != http.MethodPost && strings.HasPrefix(last, "{")
	request := jsonSchema(route.Operation.RequestBody)
	if (!create && !update) || request == nil || request.Extensions["x-steward-open"] == true {
		return nil
	}
	var answer *openapi3.Schema
	for code, resp := range route.Operation.Responses.Map() {
		if strings.HasPrefix(code, "2") && resp.Value != nil {
			if mt := resp.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
				answer = mt.Schema.Value
			}
		}
	}
	taken := properties(request)
	o := &outputOnly{members: map[string]bool{}}
	for name := range properties(answer) {
		if !taken[name] {
			o.members[name] = true
		}
	}
	if update {
		o.immutable = immutableMembers(answer)
	}
	if create && !taken["id"] {
		for _, p := range route.Operation.Parameters {
			if p.Value != nil && p.Value.In == openapi3.ParameterInQuery && p.Value.Name == "id" {
				o.namesID = true
			}
		}
	}
	if len(o.members) == 0 && !o.namesID && len(o.immutable) == 0 {
		return nil
	}
	return o
}

func jsonSchema(body *openapi3.RequestBodyRef) *openapi3.Schema {
	if body == nil || body.Value == nil {
		return nil
	}
	mt := body.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return mt.Schema.Value
}

// properties are a schema's top-level property names, its allOf
// branches' included.
func properties(s *openapi3.Schema) map[string]bool {
	names := map[string]bool{}
	if s == nil {
		return names
	}
	for name := range s.Properties {
		names[name] = true
	}
	for _, branch := range s.AllOf {
		for name := range properties(branch.Value) {
			names[name] = true
		}
	}
	return names
}

// strip removes the output-only members from r's body and, on a create,
// moves a body's "id" to ?id=. On an update it returns the immutable
// members the body names, with their values, for checkImmutable. A body
// that is not a JSON object is left for the validator to refuse. It runs
// before the request is audited, so the record names the id the body gave.
func (o *outputOnly) strip(r *http.Request) (named map[string]json.RawMessage, err error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, decodeError(err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return nil, nil
	}
	for name, raw := range members {
		if o.immutable[name] {
			if named == nil {
				named = map[string]json.RawMessage{}
			}
			named[name] = raw
		}
	}
	changed := false
	if raw, ok := members["id"]; ok && o.namesID {
		var id string
		if err := json.Unmarshal(raw, &id); err != nil {
			return nil, invalid.New("id", "must be a string")
		}
		q := r.URL.Query()
		switch query := q.Get("id"); {
		case q.Has("id") && query != id:
			return nil, &idMismatchError{query: query, body: id}
		case !q.Has("id"):
			q.Set("id", id)
			r.URL.RawQuery = q.Encode()
		}
		delete(members, "id")
		changed = true
	}
	for name := range members {
		if o.members[name] {
			delete(members, name)
			changed = true
		}
	}
	if !changed {
		return named, nil
	}
	if body, err = json.Marshal(members); err != nil {
		return nil, fmt.Errorf("httpapi: re-encode the body: %w", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return named, nil
}

// idMismatchError refuses a create whose body names another id than ?id=.
type idMismatchError struct{ query, body string }

func (e *idMismatchError) Error() string {
	return fmt.Sprintf("invalid argument: id: the body's id %q is not the query's ?id=%s; send one, or the same in both",
		e.body, url.QueryEscape(e.query))
}

func (e *idMismatchError) Unwrap() error {
	return invalid.New("id", "the body's id %q is not the query's ?id=%s", e.body, e.query)
}

func (e *idMismatchError) ProblemFields() map[string]any {
	fields := e.Unwrap().(*invalid.Error).ProblemFields()
	fields["id"], fields["body_id"] = e.query, e.body
	return fields
}
