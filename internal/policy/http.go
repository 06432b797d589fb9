package policy

import (
	"fmt"
	"net/http"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/limits"
	"github.com/stewardhq/steward/internal/store"
)

// Routes registers the policy resources and evaluateRequest on api.
func (s *Service) Routes(api *httpapi.API) {
	api.Handle("POST /api/v1/policies", s.handleCreate)
	api.Handle("GET /api/v1/policies", s.handleList)
	api.Handle("GET /api/v1/policies/{policy_id}", s.handleGet)
	api.Handle("PATCH /api/v1/policies/{policy_id}", s.handleUpdate)
	api.Handle("DELETE /api/v1/policies/{policy_id}", s.handleDelete)
	api.Handle("POST /api/v1/policies:evaluateRequest", s.handleEvaluate)
	// The rehydration seed's path, served as written (DESIGN §4).
	api.Handle("POST /api/v1alpha1/policies:evaluateRequest", s.handleEvaluate)
}

type policyView struct {
	Policy
	Path string `json:"path"`
	ETag string `json:"etag"`
}

func viewPolicy(p Policy) policyView {
	if p.LabelSelector == nil {
		p.LabelSelector = map[string]string{}
	}
	return policyView{p, "policies/" + p.ID, httpapi.ETag(p.Version)}
}

func writePolicy(w http.ResponseWriter, status int, p Policy) error {
	w.Header().Set("ETag", httpapi.ETag(p.Version))
	return httpapi.WriteJSON(w, status, viewPolicy(p))
}

func (s *Service) handleCreate(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		DisplayName   string            `json:"display_name"`
		PolicyType    Type              `json:"policy_type"`
		Priority      *int              `json:"priority"`
		LabelSelector map[string]string `json:"label_selector"`
		RegoCode      string            `json:"rego_code"`
		Enabled       *bool             `json:"enabled"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	params := CreateParams{
		ID: r.URL.Query().Get("id"), DisplayName: body.DisplayName, PolicyType: body.PolicyType, Priority: DefaultPriority,
		LabelSelector: body.LabelSelector, RegoCode: body.RegoCode, Enabled: body.Enabled,
	}
	if body.Priority != nil {
		if *body.Priority == 0 {
			return invalid.New("priority", "must be between %d and %d", MinPriority, MaxPriority)
		}
		params.Priority = *body.Priority
	}
	p, err := s.Create(r.Context(), params)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/policies/"+p.ID)
	return writePolicy(w, http.StatusCreated, p)
}

func (s *Service) handleList(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	enabled, err := httpapi.QueryBool(r, "enabled")
	if err != nil {
		return err
	}
	t := Type(r.URL.Query().Get("policy_type"))
	if t != "" && !t.Valid() {
		return invalid.New("policy_type", "must be GLOBAL, TENANT or USER")
	}
	ps, err := s.Policies(r.Context(), ListParams{PolicyType: t, Enabled: enabled, Page: page})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, store.MapPage(ps, viewPolicy))
}

func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) error {
	p, err := s.Policy(r.Context(), r.PathValue("policy_id"))
	if err != nil {
		return err
	}
	return writePolicy(w, http.StatusOK, p)
}

func (s *Service) handleUpdate(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	var patch Patch
	if err := httpapi.DecodeJSON(r, &patch); err != nil {
		return err
	}
	p, err := s.Update(r.Context(), r.PathValue("policy_id"), patch, ifMatch)
	if err != nil {
		return err
	}
	return writePolicy(w, http.StatusOK, p)
}

func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	if err := s.Delete(r.Context(), r.PathValue("policy_id"), ifMatch); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type evaluateRequest struct {
	ServiceInstance struct {
		Spec   map[string]any    `json:"spec"`
		Labels map[string]string `json:"labels"`
	} `json:"service_instance"`
	ExcludeProviders []string `json:"exclude_providers"`
	// DryRunPlacement (default true) names the provider the default rule
	// would pick when no policy selects one; false answers the policies'
	// decision alone, as DCM's engine does.
	DryRunPlacement *bool `json:"dry_run_placement"`
	// Policies are drafts evaluated as if stored (EvaluateWithDrafts);
	// only an admin, who may store them, may bring them.
	Policies []draftPolicy `json:"policies"`
}

type draftPolicy struct {
	ID            string            `json:"id"`
	DisplayName   string            `json:"display_name"`
	PolicyType    Type              `json:"policy_type"`
	Priority      int               `json:"priority"`
	LabelSelector map[string]string `json:"label_selector"`
	RegoCode      string            `json:"rego_code"`
	Enabled       *bool             `json:"enabled"`
}

// Values of evaluateResponse.SelectedBy.
const (
	selectedByPolicy      = "policy"
	selectedByDefaultRule = "default_rule"
)

type evaluateResponse struct {
	EvaluatedServiceInstance struct {
		Spec map[string]any `json:"spec"`
	} `json:"evaluated_service_instance"`
	SelectedProvider string `json:"selected_provider"`
	// SelectedBy says where SelectedProvider comes from: "policy",
	// "default_rule", or "" when there is none.
	SelectedBy          string              `json:"selected_by"`
	Status              string              `json:"status"`
	AppliedPolicies     []string            `json:"applied_policies"`
	Constraints         map[string]any      `json:"constraints"`
	ProviderConstraints ProviderConstraints `json:"provider_constraints"`
}

// handleEvaluate serves evaluateRequest (rehydration seed). It is advisory:
// it stores nothing, and when no policy selects a provider it names the one
// the default rule would pick now ("" if none fits), unless the request
// says dry_run_placement false.
func (s *Service) handleEvaluate(w http.ResponseWriter, r *http.Request) error {
	var req evaluateRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	spec := req.ServiceInstance.Spec
	if spec == nil {
		return invalid.New("service_instance.spec", "is required")
	}
	serviceType, _ := spec["service_type"].(string)
	if serviceType == "" {
		return invalid.New("service_instance.spec.service_type", "is required")
	}
	// The labels an order would have, held to an order's rules.
	var errs invalid.Errors
	limits.CheckLabels(&errs, "service_instance.labels", req.ServiceInstance.Labels)
	if err := errs.Err(); err != nil {
		return err
	}
	providers, err := s.cfg.Providers.AvailableProviders(r.Context())
	if err != nil {
		return fmt.Errorf("list providers for policy evaluation: %w", err)
	}
	drafts := make([]CreateParams, len(req.Policies))
	for i, d := range req.Policies {
		drafts[i] = CreateParams{ID: d.ID, DisplayName: d.DisplayName, PolicyType: d.PolicyType, Priority: d.Priority,
			LabelSelector: d.LabelSelector, RegoCode: d.RegoCode, Enabled: d.Enabled}
	}
	if len(drafts) > 0 {
		if p, ok := auth.PrincipalFrom(r.Context()); !ok || p.Role != auth.RoleAdmin {
			return fmt.Errorf("%w: only admins, who may store policies, may evaluate draft policies", auth.ErrPermissionDenied)
		}
	}
	res, err := s.EvaluateWithDrafts(r.Context(), EvaluateParams{
		Spec: spec, ServiceType: serviceType, Labels: req.ServiceInstance.Labels, Project: auth.ProjectFrom(r.Context()),
		AvailableProviders: providers, ExcludeProviders: req.ExcludeProviders,
	}, drafts)
	if err != nil {
		return err
	}
	var out evaluateResponse
	if res.SelectedProvider != "" {
		out.SelectedBy = selectedByPolicy
	} else if req.DryRunPlacement == nil || *req.DryRunPlacement {
		if p, err := PickProvider(PickParams{Providers: providers, ServiceType: serviceType,
			Constraints: res.ProviderConstraints, Exclude: req.ExcludeProviders}); err == nil {
			res.SelectedProvider, out.SelectedBy = p.Name, selectedByDefaultRule
		}
	}
	out.EvaluatedServiceInstance.Spec = res.Spec
	out.SelectedProvider, out.Status, out.AppliedPolicies = res.SelectedProvider, res.Status, nonNil(res.Applied)
	out.Constraints, out.ProviderConstraints = res.Constraints, res.ProviderConstraints
	return httpapi.WriteJSON(w, http.StatusOK, out)
}
