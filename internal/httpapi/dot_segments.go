package httpapi

import (
	"net/http"
	"strings"

	"github.com/stewardhq/steward/internal/invalid"
)

// dotSegments refuses a path with a "." or ".." segment (raw or as %2e):
// ServeMux would answer it with a redirect to the cleaned path
// (/service-types/../openapi.json → /openapi.json), so an id of "." or ".."
// got a 307 instead of a problem (issue 22). The error names the path
// parameter the segment stands in, found by routing the path with the
// segment replaced, or "path" when no route has a parameter there.
func (a *API) dotSegments(r *http.Request) error {
	segs := strings.Split(r.URL.Path, "/")
	var dots []int
	for i, s := range segs {
		if s == "." || s == ".." {
			dots = append(dots, i)
		}
	}
	if dots == nil {
		return nil
	}
	field, value := "path", segs[dots[0]]
	probe := r.Clone(r.Context())
	for _, i := range dots {
		segs[i] = "dot-segment"
	}
	probe.URL.Path, probe.URL.RawPath = strings.Join(segs, "/"), ""
	if _, pattern := a.mux.Handler(probe); pattern != "" {
		_, path, _ := strings.Cut(pattern, " ")
		if ps := strings.Split(path, "/"); dots[0] < len(ps) && strings.HasPrefix(ps[dots[0]], "{") {
			field = strings.TrimSuffix(strings.TrimSuffix(strings.Trim(ps[dots[0]], "{}"), "..."), "$")
		}
	}
	return invalid.New(field, "%q is not a valid id: a path segment may not be . or ..", value)
}
