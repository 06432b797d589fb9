// Package auth owns principals (who calls) and projects (whose rows they
// touch). Every request carries both from the moment it is authenticated, and
// every store query for a project-owned row takes the project.
//
// Authentication (bearer tokens) is the tokens package's; this package holds
// what every layer needs to know of its outcome: the principal, its role, the
// project a request acts in, and which routes a role may use (Authorize).
package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// DefaultProject is the project of the development principal and of the
// static administrator token.
const DefaultProject = "default"

// Principal is an authenticated caller.
type Principal struct {
	// Type is "user" or "service_account" (API.md, Audit).
	Type string `json:"type"`
	// ID names the caller.
	ID string `json:"id"`
	// Role says what it may do (Authorize).
	Role Role `json:"-"`
	// Project is the project a project-bound role works in; "" for the
	// others, which name it per request.
	Project string `json:"-"`
	// Provider and Adapter bind a service account to the one provider or
	// adapter it reports for.
	Provider string `json:"-"`
	Adapter  string `json:"-"`
	// Operation binds a repair worker's service account to the one repair
	// operation it reports on.
	Operation string `json:"-"`
	// ServiceTypes are what a provider's service account may register for,
	// granted on its token ("*": any): MayRegister.
	ServiceTypes []string `json:"-"`
	// Projects are the projects whose orders a provider's service account
	// may serve, granted on its token (AllProjects: every one).
	Projects []string `json:"-"`
	// Token is the id of the token that authenticated the caller, the one
	// thing that tells apart two principals of the same name ("" for the
	// development principal; a static token's is its kind).
	Token string `json:"-"`
}

// String renders the principal as "type:id", as people read it.
func (p Principal) String() string { return p.Type + ":" + p.ID }

// Key names the principal uniquely, "type:id/token:TOKEN", for what must
// never pass from one principal to another (idempotency records) and for
// records that must say exactly who acted (created_by): token names are not
// unique, token ids are.
func (p Principal) Key() string {
	if p.Token == "" {
		return p.String()
	}
	return p.String() + "/token:" + p.Token
}

// MayRegister reports whether p may register a provider for serviceType:
// a provider's service account only for the types its token was granted,
// anyone else that may register at all (an admin) for any.
func (p Principal) MayRegister(serviceType string) bool {
	if p.Provider == "" {
		return true
	}
	return slices.Contains(p.ServiceTypes, "*") || slices.Contains(p.ServiceTypes, serviceType)
}

// binding names what a service account is bound to.
func (p Principal) binding() string {
	switch {
	case p.Provider != "":
		return "provider " + p.Provider
	case p.Adapter != "":
		return "adapter " + p.Adapter
	case p.Operation != "":
		return "repair operation " + p.Operation
	}
	return "nothing"
}

// Dev is the principal of every request to a --dev server: an admin in
// DefaultProject.
var Dev = Principal{Type: "user", ID: "dev", Role: RoleAdmin}

// ErrUnauthenticated is returned when a request has no valid credentials.
var ErrUnauthenticated = errors.New("missing or invalid bearer token")

// Authenticator turns a bearer token into a principal (the tokens package
// implements it; an OIDC/JWT verifier is the next). token is "" when the
// request had none.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (Principal, error)
}

// ProjectFor is the project a request by p acts in, given the project the
// request named ("" when none): a project-bound principal's own (naming
// another is refused with ErrPermissionDenied), else the named one or
// DefaultProject.
func ProjectFor(p Principal, named string) (string, error) {
	if p.Role.ProjectBound() {
		if named != "" && named != p.Project {
			return "", fmt.Errorf("%w: %s works in project %q, not %q", ErrPermissionDenied, p, p.Project, named)
		}
		return p.Project, nil
	}
	if named == "" {
		return DefaultProject, nil
	}
	return named, nil
}

type principalKey struct{}
type projectKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal in ctx, and false when there is none.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// WithProject returns ctx carrying the project the request acts in.
func WithProject(ctx context.Context, project string) context.Context {
	return context.WithValue(ctx, projectKey{}, project)
}

// ProjectFrom returns the project in ctx ("" when there is none).
func ProjectFrom(ctx context.Context) string {
	p, _ := ctx.Value(projectKey{}).(string)
	return p
}
