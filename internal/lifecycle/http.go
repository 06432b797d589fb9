package lifecycle

import (
	"encoding/json"
	"net/http"

	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
)

// Routes registers the lifecycles and orders (catalog-item-instances)
// resources on api.
func (s *Service) Routes(api *httpapi.API) {
	api.Handle("POST /api/v1/lifecycles", s.handleCreate)
	api.Handle("GET /api/v1/lifecycles", s.handleList)
	api.Handle("GET /api/v1/lifecycles/{lifecycle_id}", s.handleGet)
	api.Handle("PUT /api/v1/lifecycles/{lifecycle_id}", s.handleReplace)
	api.Handle("DELETE /api/v1/lifecycles/{lifecycle_id}", s.handleDelete)
	s.orderRoutes(api)
}

type lifecycleView struct {
	Lifecycle
	Path string `json:"path"`
	ETag string `json:"etag"`
}

func viewLifecycle(l Lifecycle) lifecycleView {
	return lifecycleView{l, "lifecycles/" + l.ID, httpapi.ETag(l.Version)}
}

func writeLifecycle(w http.ResponseWriter, status int, l Lifecycle) error {
	v := viewLifecycle(l)
	w.Header().Set("ETag", v.ETag)
	return httpapi.WriteJSON(w, status, v)
}

// sourceBody is a POST or PUT body: a definition in full or compact form.
// id is optional; POST takes it when ?id= is absent, and on PUT it must be
// the path's (400 INVALID_ARGUMENT), so that a GET's answer can be sent back.
type sourceBody struct {
	ID string `json:"id"`
	statemachine.Definition
	Compact json.RawMessage `json:"compact"`
}

func (b sourceBody) source() statemachine.Source {
	return statemachine.Source{Definition: b.Definition, Compact: b.Compact}
}

func (s *Service) handleCreate(w http.ResponseWriter, r *http.Request) error {
	var body sourceBody
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	id := r.URL.Query().Get("id")
	switch {
	case id == "":
		id = body.ID
	case body.ID != "" && body.ID != id:
		return invalid.New("id", "is %q in the body but %q in ?id=: give one, or the same", body.ID, id)
	}
	l, err := s.Create(r.Context(), CreateParams{ID: id, Source: body.source()})
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/lifecycles/"+l.ID)
	return writeLifecycle(w, http.StatusCreated, l)
}

func (s *Service) handleList(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	ls, err := s.Lifecycles(r.Context(), page)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, store.MapPage(ls, viewLifecycle))
}

func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) error {
	l, err := s.Lifecycle(r.Context(), r.PathValue("lifecycle_id"))
	if err != nil {
		return err
	}
	return writeLifecycle(w, http.StatusOK, l)
}

func (s *Service) handleReplace(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	var body sourceBody
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	// A body's id other than the path's was refused (a member fixed at create) before
	// (httpapi, from x-steward-immutable).
	l, err := s.Replace(r.Context(), ReplaceParams{ID: r.PathValue("lifecycle_id"), Source: body.source(), IfMatch: ifMatch})
	if err != nil {
		return err
	}
	return writeLifecycle(w, http.StatusOK, l)
}

func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	if err := s.Delete(r.Context(), r.PathValue("lifecycle_id"), ifMatch); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
