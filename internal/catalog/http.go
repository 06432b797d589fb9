package catalog

import (
	"encoding/json"
	"net/http"

	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/store"
)

// Routes registers the service types and catalog items resources on api.
func (s *Service) Routes(api *httpapi.API) {
	api.Handle("GET /api/v1/service-types", s.handleListServiceTypes)
	api.Handle("POST /api/v1/service-types", s.handleCreateServiceType)
	api.Handle("GET /api/v1/service-types/{service_type_id}", s.handleGetServiceType)
	api.Handle("PUT /api/v1/service-types/{service_type_id}", s.handleReplaceServiceType)
	api.Handle("DELETE /api/v1/service-types/{service_type_id}", s.handleDeleteServiceType)
	api.Handle("GET /api/v1/service-types/{service_type_id}/openapi.json", s.handleServiceTypeOpenAPI)

	api.Handle("POST /api/v1/catalog-items", s.handleCreateItem)
	api.Handle("GET /api/v1/catalog-items", s.handleListItems)
	api.Handle("GET /api/v1/catalog-items/{catalog_item_id}", s.handleGetItem)
	api.Handle("PATCH /api/v1/catalog-items/{catalog_item_id}", s.handleUpdateItem)
	api.Handle("DELETE /api/v1/catalog-items/{catalog_item_id}", s.handleDeleteItem)

}

// serviceTypeView is a ServiceType with its path. ServiceType marshals
// itself, so embedding it would drop path: the view splices it in.
type serviceTypeView struct{ ServiceType }

func (v serviceTypeView) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(v.ServiceType)
	if err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return nil, err
	}
	members["path"], _ = json.Marshal("service-types/" + v.ID)
	members["etag"], _ = json.Marshal(httpapi.ETag(v.Version))
	return json.Marshal(members)
}

func writeServiceType(w http.ResponseWriter, status int, st ServiceType) error {
	w.Header().Set("ETag", httpapi.ETag(st.Version))
	return httpapi.WriteJSON(w, status, serviceTypeView{st})
}

type itemView struct {
	Item
	Path string `json:"path"`
	ETag string `json:"etag"`
}

func viewItem(it Item) itemView {
	return itemView{it, "catalog-items/" + it.ID, httpapi.ETag(it.Version)}
}

func writeItem(w http.ResponseWriter, status int, it Item) error {
	v := viewItem(it)
	w.Header().Set("ETag", v.ETag)
	return httpapi.WriteJSON(w, status, v)
}

func (s *Service) handleListServiceTypes(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	types, err := s.ServiceTypes(r.Context(), page)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, store.MapPage(types, func(st ServiceType) serviceTypeView {
		return serviceTypeView{st}
	}))
}

func (s *Service) handleGetServiceType(w http.ResponseWriter, r *http.Request) error {
	st, err := s.ServiceType(r.Context(), r.PathValue("service_type_id"))
	if err != nil {
		return err
	}
	return writeServiceType(w, http.StatusOK, st)
}

func (s *Service) handleCreateServiceType(w http.ResponseWriter, r *http.Request) error {
	var p ServiceTypeParams
	if err := httpapi.DecodeJSON(r, &p); err != nil {
		return err
	}
	p.ID = r.URL.Query().Get("id")
	st, err := s.CreateServiceType(r.Context(), p)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/service-types/"+st.ID)
	return writeServiceType(w, http.StatusCreated, st)
}

func (s *Service) handleReplaceServiceType(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	var p ServiceTypeParams
	if err := httpapi.DecodeJSON(r, &p); err != nil {
		return err
	}
	p.ID = r.PathValue("service_type_id")
	st, err := s.ReplaceServiceType(r.Context(), p, ifMatch)
	if err != nil {
		return err
	}
	return writeServiceType(w, http.StatusOK, st)
}

func (s *Service) handleDeleteServiceType(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	if err := s.DeleteServiceType(r.Context(), r.PathValue("service_type_id"), ifMatch); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Service) handleCreateItem(w http.ResponseWriter, r *http.Request) error {
	var p CreateItemParams
	if err := httpapi.DecodeJSON(r, &p); err != nil {
		return err
	}
	p.ID = r.URL.Query().Get("id")
	it, err := s.CreateItem(r.Context(), p)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/catalog-items/"+it.ID)
	return writeItem(w, http.StatusCreated, it)
}

func (s *Service) handleListItems(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	items, err := s.Items(r.Context(), ListItemsParams{ServiceType: r.URL.Query().Get("service_type"), Page: page})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, store.MapPage(items, viewItem))
}

func (s *Service) handleGetItem(w http.ResponseWriter, r *http.Request) error {
	it, err := s.Item(r.Context(), r.PathValue("catalog_item_id"))
	if err != nil {
		return err
	}
	return writeItem(w, http.StatusOK, it)
}

func (s *Service) handleUpdateItem(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	var patch ItemPatch
	if err := httpapi.DecodeJSON(r, &patch); err != nil {
		return err
	}
	it, err := s.UpdateItem(r.Context(), r.PathValue("catalog_item_id"), patch, ifMatch)
	if err != nil {
		return err
	}
	return writeItem(w, http.StatusOK, it)
}

func (s *Service) handleDeleteItem(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	if err := s.DeleteItem(r.Context(), r.PathValue("catalog_item_id"), ifMatch); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Service) handleServiceTypeOpenAPI(w http.ResponseWriter, r *http.Request) error {
	doc, err := s.OpenAPI(r.Context(), r.PathValue("service_type_id"))
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, doc)
}
