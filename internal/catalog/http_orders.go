package catalog

import (
	"net/http"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/store"
)

// orderRoutes registers the catalog-item-instances collection on api.
func (s *Service) orderRoutes(api *httpapi.API) {
	api.Handle("POST /api/v1/catalog-item-instances", s.handleCreateOrder)
	api.Handle("GET /api/v1/catalog-item-instances", s.handleListOrders)
	api.Handle("GET /api/v1/catalog-item-instances/{catalog_item_instance_id}", s.handleGetOrder)
	api.Handle("DELETE /api/v1/catalog-item-instances/{catalog_item_instance_id}", s.handleDeleteOrder)
	api.Handle("POST /api/v1/catalog-item-instances/{catalog_item_instance_id}:rehydrate", s.handleRehydrateOrder)
}

func (s *Service) handleRehydrateOrder(w http.ResponseWriter, r *http.Request) error {
	op, err := s.RehydrateOrder(r.Context(), auth.ProjectFrom(r.Context()), r.PathValue("catalog_item_instance_id"))
	if err != nil {
		return err
	}
	return placement.WriteOperation(w, op)
}

type orderView struct {
	Order
	Path       string      `json:"path"`
	Conditions []Condition `json:"conditions"`
	ETag       string      `json:"etag"`
}

func viewOrder(o Order) orderView {
	return orderView{Order: o, Path: "catalog-item-instances/" + o.ID, Conditions: o.Conditions(),
		ETag: httpapi.ETag(o.Version)}
}

func writeOrder(w http.ResponseWriter, status int, o Order) error {
	v := viewOrder(o)
	w.Header().Set("ETag", v.ETag)
	return httpapi.WriteJSON(w, status, v)
}

func (s *Service) handleCreateOrder(w http.ResponseWriter, r *http.Request) error {
	var p CreateOrderParams
	if err := httpapi.DecodeJSON(r, &p); err != nil {
		return err
	}
	p.ID = r.URL.Query().Get("id")
	p.Project = auth.ProjectFrom(r.Context())
	o, err := s.CreateOrder(r.Context(), p)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/catalog-item-instances/"+o.ID)
	return writeOrder(w, http.StatusCreated, o)
}

func (s *Service) handleListOrders(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	showDeleted, err := httpapi.QueryFlag(r, "show_deleted")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	orders, err := s.Orders(r.Context(), ListOrdersParams{
		Project: auth.ProjectFrom(r.Context()), ServiceType: q.Get("service_type"), State: q.Get("state"),
		CatalogItemID: q.Get("catalog_item_id"), ShowDeleted: showDeleted, Page: page,
	})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, store.MapPage(orders, viewOrder))
}

func (s *Service) handleGetOrder(w http.ResponseWriter, r *http.Request) error {
	showDeleted, err := httpapi.QueryFlag(r, "show_deleted")
	if err != nil {
		return err
	}
	o, err := s.Order(r.Context(), auth.ProjectFrom(r.Context()), r.PathValue("catalog_item_instance_id"),
		showDeleted)
	if err != nil {
		return err
	}
	return writeOrder(w, http.StatusOK, o)
}

func (s *Service) handleDeleteOrder(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	o, err := s.DeleteOrder(r.Context(), auth.ProjectFrom(r.Context()), r.PathValue("catalog_item_instance_id"),
		ifMatch)
	if err != nil {
		return err
	}
	return writeOrder(w, http.StatusAccepted, o)
}
