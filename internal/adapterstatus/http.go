package adapterstatus

import (
	"errors"
	"net/http"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
)

// Routes registers the adapter status API (API.md "Adapter status").
func (s *Service) Routes(api *httpapi.API) {
	api.Handle("PUT /api/v1/catalog-item-instances/{catalog_item_instance_id}/adapter-statuses/{adapter}", s.handlePut)
	api.Handle("GET /api/v1/catalog-item-instances/{catalog_item_instance_id}/adapter-statuses", s.handleList)
}

// orderID is the id of the order the path names by its id or, as on every
// order route, by its identity (<service_type>.<attribute>=<value>).
func (s *Service) orderID(r *http.Request) (string, error) {
	return s.cfg.Orders.Resolve(r.Context(), auth.ProjectFrom(r.Context()), r.PathValue("catalog_item_instance_id"))
}

func (s *Service) handlePut(w http.ResponseWriter, r *http.Request) error {
	var p PutParams
	err := httpapi.DecodeJSON(r, &p)
	if err != nil {
		return err
	}
	p.Project, p.Adapter = auth.ProjectFrom(r.Context()), r.PathValue("adapter")
	if p.OrderID, err = s.orderID(r); err != nil {
		return err
	}
	rep, err := s.Put(r.Context(), p)
	var discarded *DiscardedError
	if errors.As(err, &discarded) {
		// Not an error for the adapter: a newer report is already there.
		w.Header().Set("Steward-Discarded", discarded.Reason)
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, rep)
}

func (s *Service) handleList(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	orderID, err := s.orderID(r)
	if err != nil {
		return err
	}
	reports, err := s.List(r.Context(), ListParams{Project: auth.ProjectFrom(r.Context()), OrderID: orderID, Page: page})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, reports)
}
