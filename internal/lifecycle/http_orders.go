package lifecycle

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// orderRoutes registers the catalog-item-instances collection on api.
func (s *Service) orderRoutes(api *httpapi.API) {
	api.Handle("POST /api/v1/catalog-item-instances", s.handleCreateOrder)
	api.Handle("GET /api/v1/catalog-item-instances", s.handleListOrders)
	api.ListsAllProjects("GET /api/v1/catalog-item-instances")
	api.Handle("GET /api/v1/catalog-item-instances/{catalog_item_instance_id}", s.handleGetOrder)
	api.Handle("PATCH /api/v1/catalog-item-instances/{catalog_item_instance_id}", s.handleUpdateOrder)
	api.Handle("DELETE /api/v1/catalog-item-instances/{catalog_item_instance_id}", s.handleDeleteOrder)
	api.Handle("POST /api/v1/catalog-item-instances/{catalog_item_instance_id}:rehydrate", s.handleRehydrateOrder)
	api.Handle("POST /api/v1/catalog-item-instances/{catalog_item_instance_id}:setState", s.handleSetState)
	api.Handle("GET /api/v1/catalog-item-instances/{catalog_item_instance_id}/events", s.handleListEvents)
	api.Handle("POST /api/v1/catalog-item-instances/{catalog_item_instance_id}:forceDelete", s.handleForceDelete)
}

type orderView struct {
	Order
	// Attributes replaces Order's in the JSON: a listed order's are passed
	// through as stored, undecoded.
	Attributes json.RawMessage `json:"attributes"`
	Path       string          `json:"path"`
	Conditions []Condition     `json:"conditions"`
	ETag       string          `json:"etag"`
	// Outputs are the order's current instance's, as the SPRM stores them
	// (not copied onto the order); {} when it has none.
	Outputs json.RawMessage `json:"outputs"`
	// DeleteTime repeats deleted_at (when the deletion was requested) under
	// the name the other resources give that moment; deleted_at stays,
	// deprecated.
	DeleteTime *time.Time `json:"delete_time"`
	// Cleanup is what of the order is still being removed from providers
	// (the old instance of a rehydration, say), on an answer of one order
	// (a read or a write); nil in lists, where it is left out.
	Cleanup *[]Cleanup `json:"cleanup,omitempty"`
}

// viewOrder returns the view of each of orders. A read or a list has its
// instances' outputs; for the others (an order as a write left it) they
// are read for all of them at once.
func (s *Service) viewOrder(r *http.Request, orders []Order) (func(o Order) orderView, error) {
	conds := s.conditionsView(r.Context())
	outputs, err := s.outputsOf(r.Context(), orders)
	if err != nil {
		return nil, err
	}
	return func(o Order) orderView {
		out := o.outputsJSON
		if shown, ok := outputs[o.InstanceID]; ok && !o.outputsRead {
			if shown.Outputs != nil {
				out, _ = json.Marshal(shown.Outputs) // checked values always encode
			}
			o.synced = shown.Synced
		}
		if out == nil {
			out = json.RawMessage("{}")
		}
		attrs := o.attributesJSON
		if attrs == nil {
			attrs, _ = json.Marshal(o.Attributes) // maps of JSON values always encode
		}
		return orderView{Order: o, Attributes: attrs, Path: "catalog-item-instances/" + o.ID,
			Conditions: conds(o), ETag: httpapi.ETag(o.Version), DeleteTime: o.DeletedAt, Outputs: out}
	}, nil
}

// outputsOf reads the outputs of the instances of those orders that were
// not read with them.
func (s *Service) outputsOf(ctx context.Context, orders []Order) (map[string]provider.Instance, error) {
	var ids []string
	for _, o := range orders {
		if !o.outputsRead && o.InstanceID != "" {
			ids = append(ids, o.InstanceID)
		}
	}
	if s.cfg.Outputs == nil || len(ids) == 0 {
		return nil, nil
	}
	return s.cfg.Outputs.InstanceOutputs(ctx, ids)
}

// writeOrder answers one order as a GET shows it, its cleanup included.
func (s *Service) writeOrder(w http.ResponseWriter, r *http.Request, status int, o Order) error {
	cleanup, err := s.cleanupsOf(r.Context(), o.ID)
	if err != nil {
		return err
	}
	view, err := s.viewOrder(r, []Order{o})
	if err != nil {
		return err
	}
	v := view(o)
	v.Cleanup = &cleanup
	w.Header().Set("ETag", v.ETag)
	httpapi.WriteJSONAppend(w, status, v.appendJSON)
	return nil
}

func orderRef(r *http.Request) string { return r.PathValue("catalog_item_instance_id") }

func (s *Service) handleCreateOrder(w http.ResponseWriter, r *http.Request) error {
	var p CreateOrderParams
	if err := httpapi.DecodeJSON(r, &p); err != nil {
		return err
	}
	p.ID = r.URL.Query().Get("id")
	p.Project = auth.ProjectFrom(r.Context())
	p.RequestKey = httpapi.RequestKey(r)
	o, err := s.CreateOrder(r.Context(), p)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/catalog-item-instances/"+o.ID)
	return s.writeOrder(w, r, http.StatusCreated, o)
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
	newestFirst, err := httpapi.QueryOrderBy(r, "create_time")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	labels, err := labelFilter(q)
	if err != nil {
		return err
	}
	orders, err := s.Orders(r.Context(), ListOrdersParams{Labels: labels,
		Project: auth.ProjectFrom(r.Context()), ServiceType: q.Get("service_type"), State: q.Get("state"),
		CatalogItemID: q.Get("catalog_item_id"), ParentID: q.Get("parent_id"), ShowDeleted: showDeleted,
		NewestFirst: newestFirst, Page: page,
	})
	if err != nil {
		return err
	}
	view, err := s.viewOrder(r, orders.Results)
	if err != nil {
		return err
	}
	views := store.MapPage(orders, view)
	httpapi.WriteJSONAppend(w, http.StatusOK, func(b []byte) []byte { return appendOrderPage(b, views) })
	return nil
}

func (s *Service) handleGetOrder(w http.ResponseWriter, r *http.Request) error {
	// show_deleted is accepted and changes nothing: one order is returned
	// while it is being deleted and as a tombstone (API.md).
	if _, err := httpapi.QueryFlag(r, "show_deleted"); err != nil {
		return err
	}
	o, err := s.showOrder(r.Context(), auth.ProjectFrom(r.Context()), orderRef(r))
	if err != nil {
		return err
	}
	return s.writeOrder(w, r, http.StatusOK, o)
}

func (s *Service) handleUpdateOrder(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	var patch OrderPatch
	if err := httpapi.DecodeJSON(r, &patch); err != nil {
		return err
	}
	o, err := s.UpdateOrder(r.Context(), auth.ProjectFrom(r.Context()), orderRef(r), patch, ifMatch)
	if err != nil {
		return err
	}
	return s.writeOrder(w, r, http.StatusOK, o)
}

func (s *Service) handleDeleteOrder(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := httpapi.IfMatch(r)
	if err != nil {
		return err
	}
	o, err := s.DeleteOrder(r.Context(), auth.ProjectFrom(r.Context()), orderRef(r), ifMatch)
	if err != nil {
		return err
	}
	return s.writeOrder(w, r, http.StatusAccepted, o)
}

func (s *Service) handleForceDelete(w http.ResponseWriter, r *http.Request) error {
	var p ForceDeleteParams
	if err := httpapi.DecodeJSON(r, &p); err != nil {
		return err
	}
	if who, ok := auth.PrincipalFrom(r.Context()); ok {
		p.By = who.Key()
	}
	if err := s.ForceDeleteOrder(r.Context(), auth.ProjectFrom(r.Context()), orderRef(r), p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Service) handleSetState(w http.ResponseWriter, r *http.Request) error {
	var p SetStateParams
	if err := httpapi.DecodeJSON(r, &p); err != nil {
		return err
	}
	o, err := s.SetState(r.Context(), auth.ProjectFrom(r.Context()), orderRef(r), p)
	if err != nil {
		return err
	}
	return s.writeOrder(w, r, http.StatusOK, o)
}

func (s *Service) handleRehydrateOrder(w http.ResponseWriter, r *http.Request) error {
	op, err := s.RehydrateOrder(r.Context(), auth.ProjectFrom(r.Context()), orderRef(r), httpapi.RequestKey(r))
	if err != nil {
		return err
	}
	return placement.WriteOperation(w, op)
}

func (s *Service) handleListEvents(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	events, err := s.Events(r.Context(), auth.ProjectFrom(r.Context()), orderRef(r), page)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, events)
}

// labelFilter reads the label filter of a list: ?label=key:value
// (repeatable; API.md's form) and ?labels.key=value (HyperFleet's). Every
// one must match; the same key asked for two values is refused, since no
// order can match it.
func labelFilter(q url.Values) (map[string]string, error) {
	out := make(map[string]string)
	add := func(param, key, value string) error {
		if prev, ok := out[key]; ok && prev != value {
			return invalid.New(param, "asks label %q to be both %q and %q", key, prev, value)
		}
		out[key] = value
		return nil
	}
	for _, v := range q["label"] {
		key, value, ok := strings.Cut(v, ":")
		if !ok || key == "" {
			return nil, invalid.New("label", "must be key:value, not %q", v)
		}
		if err := add("label", key, value); err != nil {
			return nil, err
		}
	}
	for param, values := range q {
		key, ok := strings.CutPrefix(param, "labels.")
		if !ok {
			continue
		}
		if key == "" {
			return nil, invalid.New(param, "must name a label: labels.<key>=<value>")
		}
		for _, v := range values {
			if err := add(param, key, v); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
