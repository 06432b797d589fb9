package auth

import (
	"errors"
	"fmt"
	"strings"
)

// Role is what a principal may do.
type Role string

// Roles (the auth issue): an admin may do everything, in every project; a
// project admin and a user work in their project, the project admin also
// hands out its tokens; a service account is a machine bound to one
// provider or adapter, and may do only what that machine does.
const (
	RoleAdmin          Role = "admin"
	RoleProjectAdmin   Role = "project_admin"
	RoleUser           Role = "user"
	RoleServiceAccount Role = "service_account"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool {
	switch r {
	case RoleAdmin, RoleProjectAdmin, RoleUser, RoleServiceAccount:
		return true
	}
	return false
}

// ProjectBound reports whether a principal of role r works in one project
// fixed by its token; the others name it per request (ProjectHeader).
func (r Role) ProjectBound() bool { return r == RoleProjectAdmin || r == RoleUser }

// ProjectHeader names the project a request acts in, for principals not
// bound to one (admins, service accounts). Without it they act in
// DefaultProject. A project-bound principal that names another project is
// refused.
const ProjectHeader = "Steward-Project"

// AllProjects, as an admin's ProjectHeader on a list route that takes it,
// lists the rows of every project (steward get -A).
const AllProjects = "*"

// ErrPermissionDenied is returned when a principal may not make a request.
var ErrPermissionDenied = errors.New("permission denied")

// globalCollections are configuration shared by every project: anyone
// reads them, only admins change them.
var globalCollections = map[string]bool{
	"providers": true, "service-types": true, "catalog-items": true, "policies": true, "lifecycles": true,
}

// Authorize reports whether p may make a request to the route pattern
// ("METHOD /api/v1/…", as registered), with pathValue giving the request's
// path parameters. It decides by role and by route; rules that depend on a
// row (the provider that owns an instance) are the domain's.
func Authorize(p Principal, pattern string, pathValue func(string) string) error {
	method, path, _ := strings.Cut(pattern, " ")
	path = strings.TrimPrefix(path, "/api/v1/")
	collection, rest, _ := strings.Cut(path, "/")
	collection, verb, _ := strings.Cut(collection, ":")
	read := method == "GET" || method == "HEAD"
	deny := func(why string, args ...any) error {
		return fmt.Errorf("%w: %s may not %s %s: %s", ErrPermissionDenied, p, method, "/api/v1/"+path,
			fmt.Sprintf(why, args...))
	}
	if collection == "whoami" {
		return nil // every principal may ask who it is
	}
	switch p.Role {
	case RoleAdmin:
		return nil
	case RoleServiceAccount:
		return authorizeMachine(p, method, collection, rest, pathValue, deny)
	case RoleProjectAdmin, RoleUser:
	default:
		return deny("no role")
	}
	switch {
	case collection == "tokens":
		if p.Role != RoleProjectAdmin {
			return deny("only admins and project admins manage tokens")
		}
		return nil
	case collection == "audit-events":
		if p.Role != RoleProjectAdmin {
			return deny("only admins and project admins read the audit log")
		}
		return nil
	case collection == "cleanup-tasks":
		// Each names an instance, its provider and its last error, of
		// whichever project: the operators', not a project's.
		return deny("cleanup tasks span every project; only admins read and retry them")
	case strings.HasSuffix(rest, ":forceDelete"):
		// It skips the adapters' confirmation of a deletion: the contract's
		// escape hatch for an operator, not for a project's users.
		return deny("only admins force a deletion")
	case collection == "service-type-instances" && !read:
		// An instance's spec goes to its provider as it is, around the
		// catalog item's fixed fields and the policy chain: orders are how a
		// project makes anything, and the SP Resource Manager's writes are
		// the control plane's and its admins'.
		return deny("the SP Resource Manager's instances are made by orders; only admins write them directly")
	case globalCollections[collection] && !read && !(collection == "policies" && verb == "evaluateRequest"):
		return deny("%s is shared configuration; only admins change it", collection)
	case strings.HasSuffix(rest, "/status") || strings.Contains(rest, "/adapter-statuses") && !read ||
		strings.HasSuffix(rest, "/report") || strings.HasSuffix(rest, "/runtime") && !read:
		return deny("only the provider, adapter or worker that owns it reports status")
	}
	return nil
}

// authorizeMachine is what a service account may do: read, and report as
// the provider or adapter it is bound to.
func authorizeMachine(p Principal, method, collection, rest string, pathValue func(string) string,
	deny func(string, ...any) error) error {
	if method == "GET" || method == "HEAD" {
		return authorizeMachineRead(p, collection, rest, pathValue, deny)
	}
	switch {
	case p.Provider != "" && collection == "providers" && method == "POST" && rest == "":
		return nil // the body's name is checked against the binding by the registry
	case p.Provider != "" && collection == "providers" && method == "PATCH" && pathValue("provider_id") == p.Provider:
		return nil
	case p.Provider != "" && collection == "service-type-instances" && method == "PUT" && strings.HasSuffix(rest, "/status"):
		return nil // the instance's provider is checked against the binding by SPRM
	case p.Provider != "" && collection == "projects" && method == "PUT" && strings.HasSuffix(rest, "/runtime"):
		return nil // the app instance's provider is checked against the binding by the repair domain
	case p.Operation != "" && collection == "projects" && method == "POST" && strings.HasSuffix(rest, "/report"):
		if op := pathValue("repair_operation_id"); op != p.Operation {
			return deny("bound to repair operation %q, reporting on %q", p.Operation, op)
		}
		return nil
	case p.Adapter != "" && collection == "catalog-item-instances" && method == "PUT" &&
		strings.Contains(rest, "/adapter-statuses/"):
		if a := pathValue("adapter"); a != p.Adapter {
			return deny("bound to adapter %q, reporting as %q", p.Adapter, a)
		}
		return nil
	}
	return deny("a service account bound to %s may only report what it is bound to", p.binding())
}

// authorizeMachineRead is what a service account may read: the shared
// configuration, and of a project's rows only what its machine works on. A
// provider's token read every project's orders with their original
// requests; now a provider reads its own instances (the registry filters
// them), an adapter the orders it follows (every project's: adapters are the
// platform's integrations), a repair worker its operation and the
// operation's target (the repair domain checks the target).
func authorizeMachineRead(p Principal, collection, rest string, pathValue func(string) string,
	deny func(string, ...any) error) error {
	switch {
	case collection == "tokens", collection == "audit-events":
		return deny("service accounts do not read %s", collection)
	case globalCollections[collection], collection == "health", collection == "openapi.json":
		return nil
	case p.Provider != "" && collection == "service-type-instances":
		return nil // the registry answers only the provider's own instances
	case p.Adapter != "" && collection == "catalog-item-instances":
		if strings.HasSuffix(rest, "/credentials") {
			return deny("credentials are for the order's users, not for machines")
		}
		return nil
	case p.Operation != "" && collection == "projects":
		op := pathValue("repair_operation_id")
		if op == p.Operation && !strings.HasSuffix(rest, "/repair-operations") {
			return nil
		}
		if op == "" && pathValue("app_instance_id") != "" && !strings.Contains(rest, "/repair-operations") {
			return nil // its operation's target only: the repair domain checks it is
		}
		return deny("bound to repair operation %q, reading another", p.Operation)
	}
	return deny("a service account bound to %s reads only what it works on", p.binding())
}
