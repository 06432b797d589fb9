package operations

import (
	"net/http"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
)

// Routes registers the Operation resource on api.
func (s *Service) Routes(api *httpapi.API) {
	api.Handle("GET /api/v1/operations", s.handleList)
	api.Handle("GET /api/v1/operations/{operation_id}", s.handleGet)
}

func (s *Service) handleList(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	done, err := httpapi.QueryBool(r, "done")
	if err != nil {
		return err
	}
	ops, err := s.List(r.Context(), ListParams{
		Project: auth.ProjectFrom(r.Context()), Kind: r.URL.Query().Get("kind"), Target: r.URL.Query().Get("target"), Done: done, Page: page,
	})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, ops)
}

func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) error {
	op, err := s.Get(r.Context(), auth.ProjectFrom(r.Context()), r.PathValue("operation_id"))
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, op)
}
