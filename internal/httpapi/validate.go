package httpapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/stewardhq/steward/internal/invalid"
)

// validator checks requests against the OpenAPI document, so the document
// and the server cannot drift apart without a test noticing.
type validator struct {
	router routers.Router
	// routes are the document's operations by "METHOD /path/{param}", the
	// pattern the API registers its handler under: the request was routed
	// already, and routing it again through the document's router was
	// two thirds of validating a GET.
	routes map[string]*routers.Route
	// query are the query parameters each of routes takes.
	query map[string][]string
	// outputOnly are the members each create and update body accepts
	// and ignores.
	outputOnly map[string]*outputOnly
	opts       *openapi3filter.Options
}

func newValidator(spec *openapi3.T) (*validator, error) {
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		return nil, fmt.Errorf("httpapi: route the OpenAPI document: %w", err)
	}
	opts := &openapi3filter.Options{
		// Authentication is the API's own step; the spec only documents it.
		AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
		SkipSettingDefaults: true,
	}
	opts.WithCustomSchemaErrorFunc(func(err *openapi3.SchemaError) string { return err.Reason })
	routes, query, outputs := map[string]*routers.Route{}, map[string][]string{}, map[string]*outputOnly{}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			route := &routers.Route{Spec: spec, Path: path, PathItem: item, Method: method, Operation: op}
			routes[method+" "+path] = route
			query[method+" "+path] = queryParameters(route)
			if o := outputOnlyMembers(route); o != nil {
				outputs[method+" "+path] = o
			}
		}
	}
	return &validator{router: router, routes: routes, query: query, outputOnly: outputs, opts: opts}, nil
}

// route finds r's operation in the document: by the pattern its handler
// was registered under, or else by routing the path.
func (v *validator) route(r *http.Request, pattern string) (*routers.Route, map[string]string, error) {
	route, ok := v.routes[pattern]
	if !ok {
		return v.router.FindRoute(r)
	}
	params := map[string]string{}
	for rest := route.Path; ; {
		_, after, found := strings.Cut(rest, "{")
		if !found {
			return route, params, nil
		}
		name, tail, _ := strings.Cut(after, "}")
		params[name] = r.PathValue(name)
		rest = tail
	}
}

// validate checks r's parameters and body. It reads the body (within the
// limit already set) and puts it back for the handler. Requests to routes the
// document does not describe pass unchecked.
func (v *validator) validate(r *http.Request, pattern string) error {
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return decodeError(err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if len(bytes.TrimSpace(body)) > 0 {
			// A JSON body without a Content-Type is JSON: say so for the
			// spec validator, which would otherwise refuse it.
			if r.Header.Get("Content-Type") == "" {
				r.Header.Set("Content-Type", "application/json")
			}
			if !isJSON(r) {
				return ErrUnsupportedMediaType
			}
			if !json.Valid(body) {
				return fmt.Errorf("%w: %v", ErrMalformedJSON, json.Unmarshal(body, new(any)))
			}
		}
	}
	// Route on the path as the client sent it: the document spells custom
	// methods as "/things/{id}:verb".
	route, params, err := v.route(r, pattern)
	if err != nil {
		return nil
	}
	err = openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: route, Options: v.opts,
	})
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if err == nil {
		return nil
	}
	return validationError(err)
}

// checkQuery refuses a query string that does not decode, naming each
// parameter that does not. r.URL.Query(), which the handlers and the spec
// validator read, drops a malformed pair without a word: before this check
// `?max_page_size=%ZZ` listed with the default page size and answered 200
// (issue 8). It runs for every route, documented or not.
func checkQuery(rawQuery string) error {
	_, err := url.ParseQuery(rawQuery)
	if err == nil {
		return nil
	}
	// Split the pairs as url.ParseQuery does, to say which one failed.
	var es invalid.Errors
	for pair := range strings.SplitSeq(rawQuery, "&") {
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		name, keyErr := url.QueryUnescape(rawKey)
		if keyErr != nil {
			name = rawKey
		}
		name = cmp.Or(name, "query")
		switch {
		case strings.Contains(pair, ";"):
			es.Add(name, `query parameter contains ";", which is not a separator: use "&"`)
		case keyErr != nil:
			es.Add(name, "query parameter name could not be decoded: %v", keyErr)
		default:
			if _, err := url.QueryUnescape(rawValue); err != nil {
				es.Add(name, "query parameter could not be decoded: %v", err)
			}
		}
	}
	if err := es.Err(); err != nil {
		return err
	}
	// No single pair is at fault: too many parameters.
	return invalid.New("query", "%v", err)
}

func isJSON(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return ct == "" || strings.Contains(ct, "json")
}

// validationError turns kin-openapi's error into the field-naming 400.
func validationError(err error) error {
	var reqErr *openapi3filter.RequestError
	if !errors.As(err, &reqErr) {
		return invalid.New("request", "%s", err.Error())
	}
	field := "body"
	if reqErr.Parameter != nil {
		field = reqErr.Parameter.Name
	}
	msg := reqErr.Reason
	var schemaErr *openapi3.SchemaError
	if errors.As(err, &schemaErr) && reqErr.Parameter == nil {
		if err := unknownFields(reqErr, schemaErr); err != nil {
			return err
		}
	}
	if errors.As(err, &schemaErr) {
		if ptr := schemaErr.JSONPointer(); len(ptr) > 0 && reqErr.Parameter == nil {
			field = strings.Join(ptr, ".")
		}
		msg = cmp.Or(boundMessage(schemaErr), schemaErr.Reason)
	} else if reqErr.Err != nil {
		msg = reqErr.Err.Error()
	}
	if errors.Is(err, openapi3filter.ErrInvalidRequired) || msg == "" {
		msg = reqErr.Error()
	}
	return invalid.New(field, "%s", msg)
}

// boundMessage says which bound a value passed, as the JSON Schema
// checks of specs say it (internal/schema), so that a refusal names the
// field and its bound: `display_name: must be at most 256 characters
// long`. It is "" for an error of any other keyword. Lengths are
// kin-openapi's, in UTF-16 code units as JSON Schema counts them.
func boundMessage(e *openapi3.SchemaError) string {
	s := e.Schema
	if s == nil {
		return ""
	}
	switch e.SchemaField {
	case "maxLength":
		if s.MaxLength != nil {
			return "must be at most " + plural(*s.MaxLength, "character") + " long"
		}
	case "minLength":
		return "must be at least " + plural(s.MinLength, "character") + " long"
	case "maxItems":
		if s.MaxItems != nil {
			return "must have at most " + plural(*s.MaxItems, "item")
		}
	case "minItems":
		return "must have at least " + plural(s.MinItems, "item")
	case "maxProperties":
		if s.MaxProps != nil {
			return "must have at most " + plural(*s.MaxProps, "member")
		}
	case "minProperties":
		return "must have at least " + plural(s.MinProps, "member")
	}
	return ""
}

func plural(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatUint(n, 10) + " " + noun + "s"
}

// notAField is what the problem says of a member a closed body does not have.
const notAField = "is not a field of this request"

// unknownFields turns kin-openapi's `property "x" is unsupported` (a member
// of an object whose schema says additionalProperties: false) into the
// 400 naming every member of that object the schema does not list, not only
// the first one kin-openapi met. It returns nil for any other error.
func unknownFields(reqErr *openapi3filter.RequestError, schemaErr *openapi3.SchemaError) error {
	if schemaErr.SchemaField != "properties" || schemaErr.Schema == nil {
		return nil
	}
	obj, ok := schemaErr.Value.(map[string]any)
	if !ok {
		return nil
	}
	prefix := strings.Join(schemaErr.JSONPointer(), ".")
	var es invalid.Errors
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if _, known := schemaErr.Schema.Properties[k]; known {
			continue
		}
		field := k
		if prefix != "" {
			field = prefix + "." + k
		}
		es.Add(field, "%s", notAField)
	}
	return es.Err()
}
