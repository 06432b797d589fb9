package placement

import (
	"net/http"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/store"
)

// Routes registers the resources collection on api.
func (s *Service) Routes(api *httpapi.API) {
	api.Handle("GET /api/v1/resources", s.handleList)
	api.Handle("GET /api/v1/resources/{instance_id}", s.handleGet)
	api.Handle("POST /api/v1/resources/{instance_id}:rehydrate", s.handleRehydrate)
}

// WriteOperation answers 202 with a started operation and its Location.
func WriteOperation(w http.ResponseWriter, op operations.Operation) error {
	w.Header().Set("Location", "/api/v1/"+op.Path())
	return httpapi.WriteJSON(w, http.StatusAccepted, op)
}

func (s *Service) handleRehydrate(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		NewInstanceID string `json:"new_instance_id"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	op, err := s.Rehydrate(r.Context(), RehydrateParams{
		Project: auth.ProjectFrom(r.Context()), InstanceID: r.PathValue("instance_id"), NewInstanceID: body.NewInstanceID,
		RequestKey: httpapi.RequestKey(r),
	})
	if err != nil {
		return err
	}
	return WriteOperation(w, op)
}

// resourceView is a resource as the API answers it. delete_time repeats
// deleted_at, which is set when the resource's deletion is requested (or
// when its instance is reported DELETED, if none was), under the name the
// other resources give that moment; deleted_at stays, deprecated.
type resourceView struct {
	Resource
	Path       string     `json:"path"`
	InstanceID string     `json:"instance_id"`
	DeleteTime *time.Time `json:"delete_time"`
}

func viewResource(r Resource) resourceView {
	return resourceView{Resource: r, Path: "resources/" + r.ID, InstanceID: r.ID, DeleteTime: r.DeletedAt}
}

func (s *Service) handleList(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	showDeleted, err := httpapi.QueryFlag(r, "show_deleted")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	rs, err := s.Resources(r.Context(), ListResourcesParams{
		Project: auth.ProjectFrom(r.Context()), CatalogItemInstanceID: q.Get("catalog_item_instance_id"),
		ProviderName: q.Get("provider_name"), ShowDeleted: showDeleted, Page: page,
	})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, store.MapPage(rs, viewResource))
}

func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) error {
	showDeleted, err := httpapi.QueryFlag(r, "show_deleted")
	if err != nil {
		return err
	}
	res, err := s.Resource(r.Context(), auth.ProjectFrom(r.Context()), r.PathValue("instance_id"),
		showDeleted)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, viewResource(res))
}
