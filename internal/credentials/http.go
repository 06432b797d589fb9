package credentials

import (
	"net/http"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
)

const (
	credentialsRoute = "GET /api/v1/catalog-item-instances/{catalog_item_instance_id}/credentials"
	rotateRoute      = "POST /api/v1/catalog-item-instances/{catalog_item_instance_id}:rotateCredentials"
)

// Routes registers the credentials routes. A read is audited as
// catalog_item_instance.credentials.read, whatever its outcome.
func (s *Service) Routes(api *httpapi.API) {
	api.Handle(credentialsRoute, s.handleCredentials)
	api.Handle(rotateRoute, s.handleRotate)
	api.AuditAs(credentialsRoute, "catalog_item_instance.credentials.read", "catalog_item_instance",
		"catalog_item_instance_id")
}

// credentialsView is the answer: the provider's credentials, and which
// order, instance and provider they are of.
type credentialsView struct {
	CatalogItemInstanceID string            `json:"catalog_item_instance_id"`
	InstanceID            string            `json:"instance_id"`
	ProviderName          string            `json:"provider_name"`
	Username              string            `json:"username,omitempty"`
	Password              string            `json:"password,omitempty"`
	URL                   string            `json:"url,omitempty"`
	Env                   map[string]string `json:"env"`
}

func (s *Service) handleCredentials(w http.ResponseWriter, r *http.Request) error {
	placed, c, err := s.Credentials(r.Context(), auth.ProjectFrom(r.Context()), r.PathValue("catalog_item_instance_id"))
	if err != nil {
		return err
	}
	if c.Env == nil {
		c.Env = map[string]string{}
	}
	w.Header().Set("Cache-Control", "no-store")
	return httpapi.WriteJSON(w, http.StatusOK, credentialsView{CatalogItemInstanceID: placed.OrderID,
		InstanceID: placed.InstanceID, ProviderName: placed.ProviderName, Username: c.Username, Password: c.Password,
		URL: c.URL, Env: c.Env})
}

func (s *Service) handleRotate(w http.ResponseWriter, r *http.Request) error {
	op, err := s.Rotate(r.Context(), auth.ProjectFrom(r.Context()), r.PathValue("catalog_item_instance_id"),
		httpapi.RequestKey(r))
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/"+op.Path())
	return httpapi.WriteJSON(w, http.StatusAccepted, op)
}
