// Package tokens owns bearer tokens: it creates them (through the API or
// `steward token create`), keeps only their SHA-256, and turns a request's
// token into its principal (auth.Authenticator). A token is
// "stw_<id>_<secret>": the id finds the row, the secret proves it.
//
// It owns the web console's sessions too (table console_sessions,
// sessions.go): a sign-in made with a token, resumed as that token's
// principal on every console request, so that a browser never keeps the
// token. Tables: api_tokens, console_sessions.
package tokens

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// ErrNotFound is returned for a token that does not exist (or is another
// project's).
var ErrNotFound = errors.New("token not found")

// prefix starts every token Steward issues, so a leaked one is recognisable
// by secret scanners.
const prefix = "stw_"

// Token is a bearer token's record. Its secret is shown once, at create.
type Token struct {
	ID       string
	Name     string
	Role     auth.Role
	Project  string
	Provider string
	Adapter  string
	// Operation binds a worker's token to the one repair operation it
	// reports on.
	Operation string
	// ServiceTypes are what a provider's token may register for (["*"]:
	// any), granted by an admin.
	ServiceTypes []string
	// Projects are the projects a provider's token may serve (["*"]: every
	// project), granted by an admin.
	Projects   []string
	CreatedBy  string
	CreateTime time.Time
	ExpireTime *time.Time
	RevokeTime *time.Time

	secretSHA256 string
}

// Principal is who the token authenticates.
func (t Token) Principal() auth.Principal {
	typ := "user"
	if t.Role == auth.RoleServiceAccount {
		typ = "service_account"
	}
	return auth.Principal{Type: typ, ID: t.Name, Role: t.Role, Project: t.Project, Provider: t.Provider,
		Adapter: t.Adapter, Operation: t.Operation, Token: t.ID, ServiceTypes: t.ServiceTypes, Projects: t.Projects}
}

// Config configures the Service.
type Config struct {
	DB *store.DB
	// Dev authenticates every request as auth.Dev.
	Dev bool
	// Static are tokens known without the database (--api-token, the
	// in-process provider's), with their principals.
	Static map[string]auth.Principal
	// CacheTTL bounds how long a verified token is trusted without reading
	// its row again: a revocation reaches other processes within it.
	// Defaults to 5 s.
	CacheTTL time.Duration
	Now      func() time.Time
}

// Service creates, lists, revokes and verifies tokens. It is safe for
// concurrent use.
type Service struct {
	cfg    Config
	q      *queries
	static map[[sha256.Size]byte]auth.Principal

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cached
}

type cached struct {
	p     auth.Principal
	until time.Time
}

// New returns a Service.
func New(cfg Config) *Service {
	cfg.CacheTTL = cmp.Or(cfg.CacheTTL, 5*time.Second)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Service{cfg: cfg, static: map[[sha256.Size]byte]auth.Principal{}, cache: map[[sha256.Size]byte]cached{}}
	if cfg.DB != nil {
		s.q = newQueries(cfg.DB.Engine())
	}
	for tok, p := range cfg.Static {
		s.static[sha256.Sum256([]byte(tok))] = p
	}
	return s
}

// maxCached bounds the cache; past it the cache starts over.
const maxCached = 10_000

// Authenticate implements auth.Authenticator.
func (s *Service) Authenticate(ctx context.Context, token string) (auth.Principal, error) {
	if s.cfg.Dev {
		return auth.Dev, nil
	}
	if token == "" {
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	sum := sha256.Sum256([]byte(token))
	if p, ok := s.static[sum]; ok {
		return p, nil
	}
	now := s.cfg.Now()
	s.mu.Lock()
	c, ok := s.cache[sum]
	s.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.p, nil
	}
	t, err := s.verify(ctx, token, sum, now)
	if err != nil {
		return auth.Principal{}, err
	}
	until := now.Add(s.cfg.CacheTTL)
	if t.ExpireTime != nil && t.ExpireTime.Before(until) {
		until = *t.ExpireTime
	}
	s.mu.Lock()
	if len(s.cache) >= maxCached {
		clear(s.cache)
	}
	s.cache[sum] = cached{p: t.Principal(), until: until}
	s.mu.Unlock()
	return t.Principal(), nil
}

// verify reads the token's row and checks its secret, revocation and
// expiry. Every failure is the same ErrUnauthenticated: the caller learns
// nothing about which tokens exist.
func (s *Service) verify(ctx context.Context, token string, sum [sha256.Size]byte, now time.Time) (Token, error) {
	rest, ok := strings.CutPrefix(token, prefix)
	id, _, ok2 := strings.Cut(rest, "_")
	if !ok || !ok2 || s.cfg.DB == nil {
		return Token{}, auth.ErrUnauthenticated
	}
	t, err := s.get(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Token{}, auth.ErrUnauthenticated
	}
	if err != nil {
		return Token{}, err
	}
	if subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(t.secretSHA256)) != 1 ||
		t.RevokeTime != nil || t.ExpireTime != nil && !now.Before(*t.ExpireTime) {
		return Token{}, auth.ErrUnauthenticated
	}
	return t, nil
}

// CreateParams describes a new token.
type CreateParams struct {
	// Name is the principal's id (a person's login, a provider's name).
	Name string
	Role auth.Role
	// Project is required for project_admin and user, and empty otherwise.
	Project string
	// Provider, Adapter or Operation binds a service_account (exactly one
	// of them): Operation makes a repair worker's token.
	Provider, Adapter, Operation string
	// ServiceTypes, for a Provider's token, are the service types it may
	// register for (at least one; "*": any).
	ServiceTypes []string
	// Projects, for a Provider's token, are the projects whose orders it
	// may serve (none given: every project, ["*"]).
	Projects []string
	// TTL, when not zero, makes the token expire.
	TTL time.Duration
	// CreatedBy names who asked ("type:id").
	CreatedBy string
}

var (
	namePattern    = regexp.MustCompile(`^[a-z0-9]([a-z0-9._@-]{0,126}[a-z0-9])?$`)
	projectPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// Create makes a token and returns it with its secret, the only time the
// secret is seen.
func (s *Service) Create(ctx context.Context, p CreateParams) (Token, string, error) {
	if err := p.validate(); err != nil {
		return Token{}, "", err
	}
	if p.Provider != "" && len(p.Projects) == 0 {
		p.Projects = []string{auth.AllProjects}
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return Token{}, "", fmt.Errorf("create token: %w", err)
	}
	t := Token{ID: store.NewID(), Name: p.Name, Role: p.Role, Project: p.Project, Provider: p.Provider,
		Adapter: p.Adapter, Operation: p.Operation, ServiceTypes: p.ServiceTypes, Projects: p.Projects,
		CreatedBy: p.CreatedBy, CreateTime: store.Now(s.cfg.Now)}
	if p.TTL > 0 {
		exp := t.CreateTime.Add(p.TTL)
		t.ExpireTime = &exp
	}
	// The audit record of POST /api/v1/tokens names the token the server
	// chose an id for.
	audit.Describe(ctx, "token:"+t.ID, map[string]any{"name": t.Name, "role": string(t.Role)})
	secret := prefix + t.ID + "_" + hex.EncodeToString(raw[:])
	sum := sha256.Sum256([]byte(secret))
	t.secretSHA256 = hex.EncodeToString(sum[:])
	if _, err := s.q.TokenInsert(ctx, s.cfg.DB, TokenInsertParams{ID: t.ID, Name: t.Name, SecretSHA256: t.secretSHA256,
		Role: string(t.Role), Project: t.Project, Provider: t.Provider, Adapter: t.Adapter, Operation: t.Operation,
		ServiceTypes: grantJSON(t.ServiceTypes), Projects: grantJSON(t.Projects), CreatedBy: t.CreatedBy, CreateTime: t.CreateTime, ExpireTime: t.ExpireTime}); err != nil {
		return Token{}, "", fmt.Errorf("create token: %w", err)
	}
	return t, secret, nil
}

func (p CreateParams) validate() error {
	var errs invalid.Errors
	if !namePattern.MatchString(p.Name) {
		errs.Add("name", "must match %s", namePattern)
	}
	switch {
	case !p.Role.Valid():
		errs.Add("role", "must be one of admin, project_admin, user, service_account")
	case p.Role.ProjectBound() && !projectPattern.MatchString(p.Project):
		errs.Add("project", "is required for role %s and must match %s", p.Role, projectPattern)
	case !p.Role.ProjectBound() && p.Project != "":
		errs.Add("project", "must be empty for role %s, which names its project per request (%s header)", p.Role,
			auth.ProjectHeader)
	}
	switch {
	case p.Role == auth.RoleServiceAccount && bindings(p) != 1:
		errs.Add("provider", "a service_account is bound to exactly one provider or adapter")
	case p.Role != auth.RoleServiceAccount && bindings(p) != 0:
		errs.Add("provider", "only a service_account is bound to a provider or adapter")
	}
	switch {
	case p.Provider != "" && len(p.ServiceTypes) == 0:
		errs.Add("service_types", "a provider's token names the service types it may register for (\"*\": any)")
	case p.Provider == "" && len(p.ServiceTypes) > 0:
		errs.Add("service_types", "only a provider's token is granted service types")
	}
	for i, st := range p.ServiceTypes {
		if st == "" {
			errs.Add(fmt.Sprintf("service_types[%d]", i), "must not be empty")
		}
	}
	if p.Provider == "" && len(p.Projects) > 0 {
		errs.Add("projects", "only a provider's token is granted projects to serve")
	}
	for i, project := range p.Projects {
		if project != auth.AllProjects && !projectPattern.MatchString(project) {
			errs.Add(fmt.Sprintf("projects[%d]", i), "must be %q or match %s", auth.AllProjects, projectPattern)
		}
	}
	if p.TTL < 0 {
		errs.Add("ttl", "must not be negative")
	}
	return errs.Err()
}

// bindings counts what p binds a service account to.
func bindings(p CreateParams) int {
	n := 0
	for _, b := range []string{p.Provider, p.Adapter, p.Operation} {
		if b != "" {
			n++
		}
	}
	return n
}

// Get returns a token; a project other than "" must be the token's.
func (s *Service) Get(ctx context.Context, project, id string) (Token, error) {
	t, err := s.get(ctx, id)
	if err == nil && project != "" && t.Project != project {
		return Token{}, ErrNotFound
	}
	return t, err
}

func (s *Service) get(ctx context.Context, id string) (Token, error) {
	row, err := s.q.TokenGet(ctx, s.cfg.DB, id)
	if errors.Is(err, store.ErrNotFound) {
		return Token{}, ErrNotFound
	}
	if err != nil {
		return Token{}, fmt.Errorf("read token %s: %w", id, err)
	}
	return tokenFromRow(row), nil
}

// List returns a page of tokens, of project when it is not "".
func (s *Service) List(ctx context.Context, project string, page store.PageRequest) (store.Page[Token], error) {
	size := cmp.Or(page.Size, store.DefaultPageSize)
	_, after := page.Keyset()
	rows, err := s.q.TokenList(ctx, s.cfg.DB, TokenListParams{Project: project, MinID: after, Limit: int64(size + 1)})
	if err != nil {
		return store.Page[Token]{}, fmt.Errorf("list tokens: %w", err)
	}
	list := make([]Token, len(rows))
	for i, row := range rows {
		list[i] = tokenFromRow(TokenGetRow(row))
	}
	return store.NewPage(list, page, func(t Token) store.Cursor { return store.Cursor{ID: t.ID} }), nil
}

// Revoke revokes a token at once in this process, and in others once their
// cache (CacheTTL) lets go of it. Revoking it again changes nothing.
func (s *Service) Revoke(ctx context.Context, project, id string) (Token, error) {
	if _, err := s.Get(ctx, project, id); err != nil {
		return Token{}, err
	}
	now := store.Now(s.cfg.Now)
	if _, err := s.q.TokenRevoke(ctx, s.cfg.DB, &now, id); err != nil {
		return Token{}, fmt.Errorf("revoke token %s: %w", id, err)
	}
	s.mu.Lock()
	clear(s.cache)
	s.mu.Unlock()
	return s.get(ctx, id)
}

// HasAdmin reports whether a live admin token exists: `steward server`
// outside --dev needs one to start (or a static one).
func (s *Service) HasAdmin(ctx context.Context) (bool, error) {
	n, err := s.q.TokenAnyAdmin(ctx, s.cfg.DB, store.Now(s.cfg.Now))
	if err != nil {
		return false, fmt.Errorf("look for an admin token: %w", err)
	}
	return n > 0, nil
}

func tokenFromRow(r TokenGetRow) Token {
	var types, projects []string
	_ = json.Unmarshal([]byte(r.ServiceTypes), &types) // written by Create: JSON arrays
	_ = json.Unmarshal([]byte(r.Projects), &projects)
	if r.Provider == "" {
		projects = nil // the column's default, which only a provider's grant means
	}
	return Token{ServiceTypes: types, Projects: projects, ID: r.ID, Name: r.Name, secretSHA256: r.SecretSHA256, Role: auth.Role(r.Role), Project: r.Project,
		Provider: r.Provider, Adapter: r.Adapter, Operation: r.Operation, CreatedBy: r.CreatedBy, CreateTime: r.CreateTime,
		ExpireTime: r.ExpireTime, RevokeTime: r.RevokeTime}
}

// grantJSON is a grant as its column keeps it: a JSON array.
func grantJSON(grant []string) string {
	if grant == nil {
		grant = []string{}
	}
	b, _ := json.Marshal(grant) // strings always encode
	return string(b)
}

// RevokeOperationTx revokes, in the caller's transaction, the tokens bound
// to a repair operation: a worker's token ends with its operation rather
// than living out its TTL. This process stops trusting them once tx
// commits, others when their cache lets go (CacheTTL).
func (s *Service) RevokeOperationTx(ctx context.Context, tx *store.Tx, operationID string) error {
	now := store.Now(s.cfg.Now)
	if _, err := s.q.TokenRevokeByOperation(ctx, tx, &now, operationID); err != nil {
		return fmt.Errorf("revoke the tokens of repair operation %s: %w", operationID, err)
	}
	tx.AfterCommit(func() {
		s.mu.Lock()
		clear(s.cache)
		s.mu.Unlock()
	})
	return nil
}
