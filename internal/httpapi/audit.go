package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/stewardhq/steward/internal/auth"
)

// AuditEntry is what the HTTP layer knows of a mutating request for the
// audit log: who, what (an action named after the route, such as
// catalog_item_instance.force_delete), on what (catalog_item_instance:web),
// in which project, and the request id.
type AuditEntry struct {
	Actor     auth.Principal
	Action    string
	Target    string
	Project   string
	RequestID string
}

// Auditor records every mutating request (the audit package implements
// it). Begin returns the context the handler runs under, which writes the
// request's record in the transaction of its change; Finish writes it on
// its own when no transaction did (the request changed nothing, or failed:
// its outcome then comes from the status); Denied records a request
// refused before it was authenticated.
type Auditor interface {
	Begin(ctx context.Context, e AuditEntry) context.Context
	Finish(ctx context.Context, status int, reason string)
	Denied(ctx context.Context, e AuditEntry, status int, reason string)
}

// mutating reports whether a request to method changes something.
func mutating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// auditEntry names a request for the audit log from its route pattern:
// the collections it walks, singular and snake_case, then the verb (a
// custom method's, or create/replace/update/delete by method); the target
// is each collection with its id. For
// "POST /api/v1/catalog-item-instances/{catalog_item_instance_id}:forceDelete"
// on /…/web:forceDelete: catalog_item_instance.force_delete on
// catalog_item_instance:web.
func auditEntry(r *http.Request, pattern string) AuditEntry {
	method, path, _ := strings.Cut(pattern, " ")
	path = strings.TrimPrefix(path, "/api/v1/")
	verb := map[string]string{http.MethodPost: "create", http.MethodPut: "replace", http.MethodPatch: "update",
		http.MethodDelete: "delete"}[method]
	if i := strings.LastIndex(path, ":"); i > strings.LastIndex(path, "/") {
		verb, path = snake(path[i+1:]), path[:i]
	}
	var kinds, target []string
	for _, seg := range strings.Split(path, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			if n := len(target); n > 0 {
				target[n-1] += ":" + r.PathValue(strings.TrimSuffix(name, "}"))
			}
			continue
		}
		kind := singular(seg)
		kinds = append(kinds, kind)
		target = append(target, kind)
	}
	if verb == "create" && len(target) > 0 && !strings.Contains(target[len(target)-1], ":") {
		// A create names the new resource by its ?id= (or the domain does,
		// once it has chosen one).
		target[len(target)-1] += ":" + r.URL.Query().Get("id")
	}
	e := AuditEntry{Action: strings.Join(append(kinds, verb), "."), Target: strings.Join(target, "/"),
		RequestID: infoFrom(r.Context()).id, Project: auth.ProjectFrom(r.Context())}
	e.Actor, _ = auth.PrincipalFrom(r.Context())
	return e
}

// singular turns a path collection into its resource's name:
// catalog-item-instances → catalog_item_instance, policies → policy.
func singular(seg string) string {
	seg = strings.ReplaceAll(seg, "-", "_")
	switch {
	case strings.HasSuffix(seg, "ies"):
		return strings.TrimSuffix(seg, "ies") + "y"
	case strings.HasSuffix(seg, "statuses"):
		return strings.TrimSuffix(seg, "es")
	case strings.HasSuffix(seg, "s") && !strings.HasSuffix(seg, "ss") && seg != "status":
		return strings.TrimSuffix(seg, "s")
	}
	return seg
}

// snake turns a camelCase verb into snake_case: forceDelete → force_delete.
func snake(s string) string {
	var b strings.Builder
	for i, c := range s {
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// AuditTarget turns a resource's path (`catalog-item-instances/med`, as its
// `path` member and the URL spell it; a leading /api/v1/ is allowed) into
// the target its audit records carry (`catalog_item_instance:med`). ok is
// false when path is not collection/id pairs.
func AuditTarget(path string) (target string, ok bool) {
	path = strings.TrimPrefix(strings.TrimPrefix(path, "/"), "api/v1/")
	segs := strings.Split(path, "/")
	if len(segs)%2 != 0 {
		return "", false
	}
	parts := make([]string, 0, len(segs)/2)
	for i := 0; i < len(segs); i += 2 {
		if segs[i] == "" || segs[i+1] == "" {
			return "", false
		}
		parts = append(parts, singular(segs[i])+":"+segs[i+1])
	}
	return strings.Join(parts, "/"), true
}
