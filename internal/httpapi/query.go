package httpapi

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"

	"github.com/stewardhq/steward/internal/invalid"
)

// UnknownParameterError refuses a query parameter the route does not take:
// r.URL.Query() hands the handlers only the names they ask for, so before
// this check `?stat=up` (a typo of state) listed everything (issue 22).
type UnknownParameterError struct {
	// Names are the parameters the route does not take, sorted.
	Names []string
	// Accepted are the ones it does, in the document's order.
	Accepted []string
}

func (e *UnknownParameterError) Error() string {
	takes := "no query parameters"
	if len(e.Accepted) > 0 {
		takes = strings.Join(e.Accepted, ", ")
	}
	quoted := make([]string, len(e.Names))
	for i, n := range e.Names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("invalid argument: query parameter %s is not one this route takes; it takes %s",
		strings.Join(quoted, ", "), takes)
}

// Unwrap makes it an *invalid.Error for the problem table (400
// INVALID_ARGUMENT) and for callers that match on it.
func (e *UnknownParameterError) Unwrap() error {
	var es invalid.Errors
	for _, n := range e.Names {
		es.Add(n, "is not a query parameter of this route")
	}
	return es.Err()
}

// ProblemFields names the parameter and lists the ones the route takes.
func (e *UnknownParameterError) ProblemFields() map[string]any {
	fields := e.Unwrap().(*invalid.Error).ProblemFields()
	fields["parameter"] = e.Names[0]
	fields["accepted"] = e.Accepted
	return fields
}

// queryParameters lists the query parameters of a documented operation,
// the path item's first, as the document declares them.
func queryParameters(route *routers.Route) []string {
	var names []string
	for _, ps := range []openapi3.Parameters{route.PathItem.Parameters, route.Operation.Parameters} {
		for _, p := range ps {
			if p != nil && p.Value != nil && p.Value.In == openapi3.ParameterInQuery && !slices.Contains(names, p.Value.Name) {
				names = append(names, p.Value.Name)
			}
		}
	}
	if names == nil {
		names = []string{}
	}
	return names
}

// checkParameterNames refuses the query parameters r's route does not
// declare in the OpenAPI document, the one list of what each route takes.
func (v *validator) checkParameterNames(r *http.Request, pattern string) error {
	accepted, ok := v.query[pattern]
	if !ok || r.URL.RawQuery == "" {
		return nil
	}
	var unknown []string
	for _, name := range slices.Sorted(maps.Keys(r.URL.Query())) {
		if !slices.Contains(accepted, name) && !labelParameter(accepted, name) {
			unknown = append(unknown, name)
		}
	}
	if unknown == nil {
		return nil
	}
	return &UnknownParameterError{Names: unknown, Accepted: accepted}
}

// labelParameter reports whether name is the second form of a label filter,
// labels.<key>=<value>, on a route that takes label=<key>:<value>.
func labelParameter(accepted []string, name string) bool {
	key, ok := strings.CutPrefix(name, "labels.")
	return ok && key != "" && slices.Contains(accepted, "label")
}
