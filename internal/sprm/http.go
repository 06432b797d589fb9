package sprm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// Routes registers the service registry, SP Resource Manager and cleanup
// queue resources on api.
func (s *Service) Routes(api *httpapi.API) {
	api.Handle("POST /api/v1/providers", s.handleRegister)
	api.Handle("GET /api/v1/providers", s.handleListProviders)
	api.Handle("GET /api/v1/providers/{provider_id}", s.handleGetProvider)
	api.Handle("PATCH /api/v1/providers/{provider_id}", s.handleUpdateProvider)
	api.Handle("DELETE /api/v1/providers/{provider_id}", s.handleDeregister)

	api.Handle("POST /api/v1/service-type-instances", s.handleCreate)
	api.Handle("GET /api/v1/service-type-instances", s.handleListInstances)
	api.Handle("GET /api/v1/service-type-instances/{instance_id}", s.handleGetInstance)
	api.Handle("DELETE /api/v1/service-type-instances/{instance_id}", s.handleDelete)
	api.Handle("PUT /api/v1/service-type-instances/{instance_id}/status", s.handleStatus)

	api.Handle("GET /api/v1/cleanup-tasks", s.handleListTasks)
	api.Handle("GET /api/v1/cleanup-tasks/{cleanup_task_id}", s.handleGetTask)
	api.Handle("POST /api/v1/cleanup-tasks/{cleanup_task_id}:retry", s.handleRetryTask)
}

type providerView struct {
	Provider
	Path string `json:"path"`
	ETag string `json:"etag"`
	// LiveInstances counts the provider's instances not deleted (what its
	// capacity's "instances" is measured against).
	LiveInstances int `json:"live_instances"`
}

func (s *Service) writeProvider(w http.ResponseWriter, r *http.Request, status int, p Provider) error {
	live, err := s.q.InstanceCountLiveByProvider(r.Context(), s.cfg.DB, p.Name)
	if err != nil {
		return fmt.Errorf("count instances of %s: %w", p.Name, err)
	}
	etag := httpapi.ETag(p.Version)
	w.Header().Set("ETag", etag)
	return httpapi.WriteJSON(w, status, providerView{p, "providers/" + p.ID, etag, int(live)})
}

type instanceView struct {
	Instance
	Path       string `json:"path"`
	InstanceID string `json:"instance_id"`
	ETag       string `json:"etag"`
}

func viewInstance(in Instance) instanceView {
	return instanceView{in, "service-type-instances/" + in.ID, in.ID, httpapi.ETag(in.Version)}
}

// taskView is a cleanup task as the API answers it. request_time and
// last_attempt_time repeat requested_at and last_attempt under AEP-142's
// `*_time` names; the old names stay, deprecated, because API.md names them.
type taskView struct {
	CleanupTask
	Path            string     `json:"path"`
	RequestTime     time.Time  `json:"request_time"`
	LastAttemptTime *time.Time `json:"last_attempt_time"`
}

func viewTask(t CleanupTask) taskView {
	return taskView{t, "cleanup-tasks/" + t.ID, t.RequestedAt, t.LastAttempt}
}

func (s *Service) handleRegister(w http.ResponseWriter, r *http.Request) error {
	var body registrationBody
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	reg, err := body.registration()
	if err != nil {
		return err
	}
	who, _ := auth.PrincipalFrom(r.Context())
	if who.Provider != "" && reg.Name != who.Provider {
		return fmt.Errorf("%w: %s is bound to provider %q and cannot register %q", auth.ErrPermissionDenied, who,
			who.Provider, reg.Name)
	}
	if err := mayRegister(who, reg.ServiceTypes); err != nil {
		return err
	}
	// The path names no provider: the audit record's target is the one
	// registered, set before Register's transaction writes the record.
	id := r.URL.Query().Get("id")
	audit.Describe(r.Context(), "provider:"+cmp.Or(id, reg.Name), nil)
	p, created, err := s.Register(r.Context(), id, reg)
	if err != nil {
		return err
	}
	if created {
		w.Header().Set("Location", "/api/v1/providers/"+p.ID)
		return s.writeProvider(w, r, http.StatusCreated, p)
	}
	return s.writeProvider(w, r, http.StatusOK, p)
}

// mayRegister refuses a registration for service types beyond what the
// provider's token was granted: a provider that registered for every type
// took the next orders of every project.
func mayRegister(who auth.Principal, serviceTypes []string) error {
	for _, st := range serviceTypes {
		if !who.MayRegister(st) {
			return fmt.Errorf("%w: %s's token grants provider %q the service types %v, not %q; an admin grants "+
				"more with a new token (service_types)", auth.ErrPermissionDenied, who, who.Provider, who.ServiceTypes, st)
		}
	}
	return nil
}

func (s *Service) handleListProviders(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	ps, err := s.Providers(r.Context(), ListProvidersParams{ServiceType: q.Get("service_type"), Status: q.Get("status"), Page: page})
	if err != nil {
		return err
	}
	counts, err := s.q.InstanceCountLivePerProvider(r.Context(), s.cfg.DB)
	if err != nil {
		return fmt.Errorf("count live instances: %w", err)
	}
	live := make(map[string]int, len(counts))
	for _, c := range counts {
		live[c.ProviderName] = int(c.Live)
	}
	return httpapi.WriteJSON(w, http.StatusOK, store.MapPage(ps, func(p Provider) providerView {
		return providerView{p, "providers/" + p.ID, httpapi.ETag(p.Version), live[p.Name]}
	}))
}

func (s *Service) handleGetProvider(w http.ResponseWriter, r *http.Request) error {
	p, err := s.Provider(r.Context(), r.PathValue("provider_id"))
	if err != nil {
		return err
	}
	return s.writeProvider(w, r, http.StatusOK, p)
}

func (s *Service) handleUpdateProvider(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	var patch ProviderPatch
	if err := httpapi.DecodeJSON(r, &patch); err != nil {
		return err
	}
	if who, _ := auth.PrincipalFrom(r.Context()); patch.ServiceTypes != nil {
		if err := mayRegister(who, patch.ServiceTypes); err != nil {
			return err
		}
	}
	p, err := s.UpdateProvider(r.Context(), r.PathValue("provider_id"), patch, ifMatch)
	if err != nil {
		return err
	}
	return s.writeProvider(w, r, http.StatusOK, p)
}

func (s *Service) handleDeregister(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	if err := s.Deregister(r.Context(), r.PathValue("provider_id"), ifMatch); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Service) handleCreate(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ProviderName string         `json:"provider_name"`
		Spec         map[string]any `json:"spec"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	project := auth.ProjectFrom(r.Context())
	in, err := s.Create(r.Context(), CreateParams{
		ID: r.URL.Query().Get("id"), Project: project, ProviderName: body.ProviderName, Spec: body.Spec,
		Metadata: provider.CreateMetadata{Project: project},
	})
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/service-type-instances/"+in.ID)
	w.Header().Set("ETag", httpapi.ETag(in.Version))
	return httpapi.WriteJSON(w, http.StatusAccepted, viewInstance(in))
}

func (s *Service) handleListInstances(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	showDeleted, err := httpapi.QueryFlag(r, "show_deleted")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	providerName := q.Get("provider_name")
	if who, _ := auth.PrincipalFrom(r.Context()); who.Provider != "" {
		// A provider's service account reads its own instances only.
		if providerName != "" && providerName != who.Provider {
			return fmt.Errorf("%w: %s is bound to provider %q and reads only its instances, not %q's",
				auth.ErrPermissionDenied, who, who.Provider, providerName)
		}
		providerName = who.Provider
	}
	ins, err := s.Instances(r.Context(), ListInstancesParams{
		Project: auth.ProjectFrom(r.Context()), ProviderName: providerName, ServiceType: q.Get("service_type"),
		Status: q.Get("status"), ShowDeleted: showDeleted, Page: page,
	})
	if err != nil {
		return err
	}
	views := store.MapPage(ins, viewInstance)
	httpapi.WriteJSONAppend(w, http.StatusOK, func(b []byte) []byte { return appendInstancePage(b, views) })
	return nil
}

func (s *Service) handleGetInstance(w http.ResponseWriter, r *http.Request) error {
	showDeleted, err := httpapi.QueryFlag(r, "show_deleted")
	if err != nil {
		return err
	}
	in, err := s.showInstance(r.Context(), auth.ProjectFrom(r.Context()), r.PathValue("instance_id"), showDeleted)
	if err != nil {
		return err
	}
	if who, _ := auth.PrincipalFrom(r.Context()); who.Provider != "" && in.ProviderName != who.Provider {
		// Another provider's instance is not this provider's to see.
		return fmt.Errorf("%w: %s", ErrInstanceNotFound, r.PathValue("instance_id"))
	}
	w.Header().Set("ETag", httpapi.ETag(in.Version))
	httpapi.WriteJSONAppend(w, http.StatusOK, viewInstance(in).appendJSON)
	return nil
}

func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	isDeferred, err := httpapi.QueryFlag(r, "deferred")
	if err != nil {
		return err
	}
	in, err := s.DeleteIfMatch(r.Context(), auth.ProjectFrom(r.Context()), r.PathValue("instance_id"), isDeferred, ifMatch)
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if isDeferred {
		status = http.StatusOK
	}
	return httpapi.WriteJSON(w, status, viewInstance(in))
}

func (s *Service) handleStatus(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	var body struct {
		Status       provider.Status  `json:"status"`
		Message      string           `json:"message"`
		ObservedTime time.Time        `json:"observed_time"`
		RestartCount *int64           `json:"restart_count"`
		Outputs      provider.Outputs `json:"outputs"`
		Synced       *provider.Sync   `json:"synced"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := s.checkReporter(r.Context(), r.PathValue("instance_id")); err != nil {
		return err
	}
	in, err := s.ApplyStatusIfMatch(r.Context(), r.PathValue("instance_id"), provider.StatusReport{
		Status: body.Status, Message: body.Message, ObservedTime: body.ObservedTime, RestartCount: body.RestartCount,
		Outputs: body.Outputs, Synced: body.Synced,
	}, ifMatch)
	if errors.Is(err, ErrStaleReport) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, viewInstance(in))
}

func (s *Service) handleListTasks(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	tasks, err := s.CleanupTasks(r.Context(), ListCleanupTasksParams{Status: q.Get("status"), ProviderName: q.Get("provider_name"), Page: page})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, store.MapPage(tasks, viewTask))
}

func (s *Service) handleGetTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.CleanupTask(r.Context(), r.PathValue("cleanup_task_id"))
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, viewTask(t))
}

func (s *Service) handleRetryTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.RetryCleanupTask(r.Context(), r.PathValue("cleanup_task_id"))
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, viewTask(t))
}

// checkReporter lets a provider's service account report only on the
// instances placed on its provider (an instance never changes provider, so
// the check needs no lock). Admins report on any.
func (s *Service) checkReporter(ctx context.Context, instanceID string) error {
	who, _ := auth.PrincipalFrom(ctx)
	if who.Role != auth.RoleServiceAccount {
		return nil
	}
	in, err := s.Instance(ctx, "", instanceID, true)
	if err != nil {
		return err
	}
	if in.ProviderName != who.Provider {
		return fmt.Errorf("%w: instance %s is on provider %q; %s reports for %q only", auth.ErrPermissionDenied,
			instanceID, in.ProviderName, who, who.Provider)
	}
	return nil
}
