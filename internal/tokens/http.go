package tokens

import (
	"fmt"
	"net/http"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/store"
)

// Routes registers the token routes on api (admins and project admins only:
// auth.Authorize).
func (s *Service) Routes(api *httpapi.API) {
	api.Handle("POST /api/v1/tokens", s.handleCreate)
	api.Handle("GET /api/v1/tokens", s.handleList)
	api.Handle("GET /api/v1/tokens/{token_id}", s.handleGet)
	api.Handle("DELETE /api/v1/tokens/{token_id}", s.handleRevoke)
	api.Handle("GET /api/v1/whoami", s.handleWhoami)
}

// caller is who a request is made as (GET /api/v1/whoami).
type caller struct {
	Principal auth.Principal `json:"principal"`
	Role      auth.Role      `json:"role"`
	// Project is the project the request acts in: a project-bound role's
	// own, else the one Steward-Project names (default "default").
	Project  string `json:"project"`
	Provider string `json:"provider,omitempty"`
	Adapter  string `json:"adapter,omitempty"`
	// TokenID is the token the request was authenticated by: two
	// principals may share a name, never a token.
	TokenID string `json:"token_id,omitempty"`
	// Open says the server authenticates nobody (--dev): every request is
	// made as this admin.
	Open bool `json:"open"`
}

// handleWhoami answers who the caller is, so a client (the console) shows
// only what its role may do without probing for it.
func (s *Service) handleWhoami(w http.ResponseWriter, r *http.Request) error {
	who, _ := auth.PrincipalFrom(r.Context())
	return httpapi.WriteJSON(w, http.StatusOK, caller{Principal: who, Role: who.Role, Project: auth.ProjectFrom(r.Context()),
		Provider: who.Provider, Adapter: who.Adapter, TokenID: who.Token, Open: s.cfg.Dev})
}

type view struct {
	ID        string    `json:"id"`
	Path      string    `json:"path"`
	Name      string    `json:"name"`
	Principal any       `json:"principal"`
	Role      auth.Role `json:"role"`
	Project   string    `json:"project"`
	Provider  string    `json:"provider,omitempty"`
	Adapter   string    `json:"adapter,omitempty"`
	// ServiceTypes are what a provider's token may register for.
	ServiceTypes []string `json:"service_types,omitempty"`
	// Projects are the projects a provider's token may serve.
	Projects   []string   `json:"projects,omitempty"`
	State      string     `json:"state"`
	CreatedBy  string     `json:"created_by"`
	CreateTime time.Time  `json:"create_time"`
	UpdateTime time.Time  `json:"update_time"`
	ExpireTime *time.Time `json:"expire_time"`
	RevokeTime *time.Time `json:"revoke_time"`
	// Token is the secret, present only in the answer to its create.
	Token string `json:"token,omitempty"`
}

func viewOf(t Token, now time.Time) view {
	v := view{ID: t.ID, Path: "tokens/" + t.ID, Name: t.Name, Principal: t.Principal(), Role: t.Role,
		Project: t.Project, Provider: t.Provider, Adapter: t.Adapter, ServiceTypes: t.ServiceTypes, Projects: t.Projects, State: "active", CreatedBy: t.CreatedBy,
		CreateTime: t.CreateTime, UpdateTime: t.CreateTime, ExpireTime: t.ExpireTime, RevokeTime: t.RevokeTime}
	switch {
	case t.RevokeTime != nil:
		v.State, v.UpdateTime = "revoked", *t.RevokeTime
	case t.ExpireTime != nil && !now.Before(*t.ExpireTime):
		v.State = "expired"
	}
	return v
}

// scope is the project whose tokens the caller manages: every project for
// an admin (""), its own for a project admin.
func scope(r *http.Request) (auth.Principal, string) {
	who, _ := auth.PrincipalFrom(r.Context())
	if who.Role == auth.RoleAdmin {
		return who, ""
	}
	return who, who.Project
}

func (s *Service) handleCreate(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name     string    `json:"name"`
		Role     auth.Role `json:"role"`
		Project  string    `json:"project"`
		Provider string    `json:"provider"`
		Adapter  string    `json:"adapter"`
		// ServiceTypes grant a provider's token the types it may register for.
		ServiceTypes []string `json:"service_types"`
		// Projects grant a provider's token the projects it may serve.
		Projects   []string `json:"projects"`
		TTLSeconds int64    `json:"ttl_seconds"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	who, project := scope(r)
	if project != "" {
		// A project admin hands out tokens of its own project, no stronger
		// than its own.
		if body.Role != auth.RoleUser && body.Role != auth.RoleProjectAdmin {
			return fmt.Errorf("%w: a project admin creates user and project_admin tokens only", auth.ErrPermissionDenied)
		}
		if body.Project != project {
			var errs invalid.Errors
			errs.Add("project", "must be %q, the project you administer", project)
			return errs.Err()
		}
	}
	t, secret, err := s.Create(r.Context(), CreateParams{Name: body.Name, Role: body.Role, Project: body.Project,
		Provider: body.Provider, Adapter: body.Adapter, ServiceTypes: body.ServiceTypes, Projects: body.Projects, TTL: time.Duration(body.TTLSeconds) * time.Second,
		CreatedBy: who.Key()})
	if err != nil {
		return err
	}
	v := viewOf(t, s.cfg.Now())
	// The secret is shown once: a replay of the create (its
	// Idempotency-Key again) answers the token without it.
	if err := httpapi.ReplayAs(w, v); err != nil {
		return err
	}
	v.Token = secret
	w.Header().Set("Location", "/api/v1/tokens/"+t.ID)
	return httpapi.WriteJSON(w, http.StatusCreated, v)
}

func (s *Service) handleList(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	_, project := scope(r)
	list, err := s.List(r.Context(), project, page)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	return httpapi.WriteJSON(w, http.StatusOK, store.MapPage(list, func(t Token) view { return viewOf(t, now) }))
}

func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) error {
	_, project := scope(r)
	t, err := s.Get(r.Context(), project, r.PathValue("token_id"))
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, viewOf(t, s.cfg.Now()))
}

func (s *Service) handleRevoke(w http.ResponseWriter, r *http.Request) error {
	_, project := scope(r)
	t, err := s.Revoke(r.Context(), project, r.PathValue("token_id"))
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, viewOf(t, s.cfg.Now()))
}
