package repair

import (
	"errors"
	"net/http"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// The routes, at the seed's paths.
const (
	appInstancePath = "/api/v1/projects/{project_id}/app-instances/{app_instance_id}"
	repairRoute     = "POST " + appInstancePath + "/repair"
	restartRoute    = "POST " + appInstancePath + "/restart"
	reportRoute     = "POST " + appInstancePath + "/repair-operations/{repair_operation_id}/report"
)

// Routes registers the app-instance routes on api.
func (s *Service) Routes(api *httpapi.API) {
	api.Handle("GET "+appInstancePath, s.handleGet)
	api.Handle("PUT "+appInstancePath+"/runtime", s.handleRuntime)
	api.Handle(repairRoute, s.handleRepair)
	api.Handle(restartRoute, s.handleRestart)
	api.Handle("GET "+appInstancePath+"/repair-operations", s.handleList)
	api.Handle("GET "+appInstancePath+"/repair-operations/{repair_operation_id}", s.handleGetOperation)
	api.Handle(reportRoute, s.handleReport)
	// The seed's audit actions and targets.
	api.AuditAs(repairRoute, "app_instance.repair.requested", "app_instance", "app_instance_id")
	api.AuditAs(restartRoute, "app_instance.restart.requested", "app_instance", "app_instance_id")
	api.AuditAs(reportRoute, "app_instance.repair.reported", "app_instance_repair_operation", "repair_operation_id")
}

// scope returns the request's project and app instance. A project-bound
// principal acts in its own project only: another project in the path
// finds nothing (404, not 403).
func scope(r *http.Request) (project, appInstanceID string, err error) {
	project, appInstanceID = r.PathValue("project_id"), r.PathValue("app_instance_id")
	if project != auth.ProjectFrom(r.Context()) {
		return "", "", ErrAppInstanceNotFound
	}
	return project, appInstanceID, nil
}

// operationView is an operation as the API shows it (API.md, Repair).
type operationView struct {
	ID             string                `json:"id"`
	Path           string                `json:"path"`
	AppInstanceID  string                `json:"app_instance_id"`
	Project        string                `json:"project"`
	Action         string                `json:"action"`
	Scope          string                `json:"scope"`
	TargetMemberID *string               `json:"target_member_id"`
	ComponentKey   *string               `json:"component_key"`
	Status         string                `json:"status"`
	Phase          string                `json:"phase"`
	Steps          []Step                `json:"steps"`
	Error          *provider.RepairError `json:"error"`
	NextSafeAction string                `json:"next_safe_action"`
	IdempotencyKey string                `json:"idempotency_key"`
	RequestedBy    string                `json:"requested_by"`
	ProviderName   string                `json:"provider_name"`
	InstanceID     string                `json:"instance_id"`
	DeliverTime    *time.Time            `json:"deliver_time"`
	CreateTime     time.Time             `json:"create_time"`
	UpdateTime     time.Time             `json:"update_time"`
	FinishTime     *time.Time            `json:"finish_time"`
}

func viewOperation(op Operation) operationView {
	return operationView{
		ID: op.ID, Path: operationPath(op), AppInstanceID: op.AppInstanceID, Project: op.Project, Action: op.Action,
		Scope: op.Scope, TargetMemberID: nullable(op.TargetMemberID), ComponentKey: nullable(op.ComponentKey),
		Status: op.Status, Phase: op.Phase(), Steps: op.Steps, Error: op.Error, NextSafeAction: op.NextSafeAction,
		IdempotencyKey: op.IdempotencyKey, RequestedBy: op.RequestedBy, ProviderName: op.ProviderName,
		InstanceID: op.InstanceID, DeliverTime: op.DeliverTime, CreateTime: op.CreateTime, UpdateTime: op.UpdateTime,
		FinishTime: op.FinishTime,
	}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// writeStarted answers 202 with the operation and its Location.
func writeStarted(w http.ResponseWriter, op Operation) error {
	w.Header().Set("Location", "/api/v1/"+operationPath(op))
	return httpapi.WriteJSON(w, http.StatusAccepted, viewOperation(op))
}

func (s *Service) handleRepair(w http.ResponseWriter, r *http.Request) error {
	project, app, err := scope(r)
	if err != nil {
		return err
	}
	var body struct {
		Action         string  `json:"action"`
		Scope          string  `json:"scope"`
		TargetMemberID *string `json:"target_member_id"`
		ComponentKey   *string `json:"component_key"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Action == provider.RepairActionRestart {
		body.Action = "" // restart has its own route
	}
	op, err := s.Request(r.Context(), Request{
		Project: project, AppInstanceID: app, Action: body.Action, Scope: body.Scope,
		TargetMemberID: deref(body.TargetMemberID), ComponentKey: deref(body.ComponentKey),
		IdempotencyKey: r.Header.Get(httpapi.IdempotencyKeyHeader), RequestKey: httpapi.RequestKey(r),
	})
	if err != nil {
		return err
	}
	return writeStarted(w, op)
}

func (s *Service) handleRestart(w http.ResponseWriter, r *http.Request) error {
	project, app, err := scope(r)
	if err != nil {
		return err
	}
	op, err := s.Request(r.Context(), Request{
		Project: project, AppInstanceID: app, Action: provider.RepairActionRestart, Scope: provider.ScopeWholeRuntime,
		IdempotencyKey: r.Header.Get(httpapi.IdempotencyKeyHeader), RequestKey: httpapi.RequestKey(r),
	})
	if err != nil {
		return err
	}
	return writeStarted(w, op)
}

func (s *Service) handleReport(w http.ResponseWriter, r *http.Request) error {
	project, app, err := scope(r)
	if err != nil {
		return err
	}
	var body Report
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	op, err := s.ApplyReport(r.Context(), project, app, r.PathValue("repair_operation_id"), body)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, viewOperation(op))
}

func (s *Service) handleList(w http.ResponseWriter, r *http.Request) error {
	project, app, err := scope(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	ops, err := s.Operations(r.Context(), ListParams{Project: project, AppInstanceID: app,
		Status: r.URL.Query().Get("status"), Page: page})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, store.MapPage(ops, viewOperation))
}

func (s *Service) handleGetOperation(w http.ResponseWriter, r *http.Request) error {
	project, app, err := scope(r)
	if err != nil {
		return err
	}
	op, err := s.Operation(r.Context(), project, app, r.PathValue("repair_operation_id"))
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, viewOperation(op))
}

func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) error {
	project, app, err := scope(r)
	if err != nil {
		return err
	}
	if who, _ := auth.PrincipalFrom(r.Context()); who.Operation != "" {
		// A repair worker reads only its operation's target: the
		// operation is looked up under this app instance, so another's is
		// not found.
		if _, err := s.Operation(r.Context(), project, app, who.Operation); err != nil {
			if errors.Is(err, ErrOperationNotFound) {
				return ErrAppInstanceNotFound
			}
			return err
		}
	}
	v, err := s.AppInstance(r.Context(), project, app)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, v)
}

func (s *Service) handleRuntime(w http.ResponseWriter, r *http.Request) error {
	project, app, err := scope(r)
	if err != nil {
		return err
	}
	var body provider.RuntimeReport
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	v, err := s.ReportRuntime(r.Context(), project, app, body)
	if errors.Is(err, ErrStaleRuntimeReport) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, v)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
