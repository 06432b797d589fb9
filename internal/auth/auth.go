// Package auth owns principals (who calls) and projects (whose rows they
// touch). Every request carries both from the moment it is authenticated, and
// every store query for a project-owned row takes the project.
//
// This first version knows two modes: development (no authentication, one
// "dev" user in the "default" project, announced loudly at start) and a static
// bearer token for an administrator. Users, service accounts, roles and
// per-project tokens come with the auth issue.
package auth

import (
	"context"
	"crypto/subtle"
	"errors"
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
}

// String renders the principal as "type:id", the form idempotency keys and
// audit records are keyed by.
func (p Principal) String() string { return p.Type + ":" + p.ID }

// ErrUnauthenticated is returned when a request has no valid credentials.
var ErrUnauthenticated = errors.New("missing or invalid bearer token")

// Config configures the authenticator.
type Config struct {
	// Dev accepts every request as the "dev" user in DefaultProject.
	Dev bool
	// AdminToken, when set, is a bearer token that authenticates the
	// "admin" service account in DefaultProject.
	AdminToken string
}

// Service authenticates requests. It is safe for concurrent use.
type Service struct {
	cfg Config
}

// New returns a Service.
func New(cfg Config) *Service { return &Service{cfg: cfg} }

// Authenticate returns the principal and project for a bearer token ("" when
// the request had none), or ErrUnauthenticated.
func (s *Service) Authenticate(_ context.Context, token string) (Principal, string, error) {
	if s.cfg.Dev {
		return Principal{Type: "user", ID: "dev"}, DefaultProject, nil
	}
	if s.cfg.AdminToken != "" && token != "" &&
		subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.AdminToken)) == 1 {
		return Principal{Type: "service_account", ID: "admin"}, DefaultProject, nil
	}
	return Principal{}, "", ErrUnauthenticated
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
