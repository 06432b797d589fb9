package console

import (
	"net/http"
	"net/url"
	"strings"
)

// updateForm lays out the order form of an order's catalog item, each
// control showing the order's value (its requested set: what a PATCH
// builds on), and returns the order's id and name with it.
func (c *Console) updateForm(r *http.Request, s *session) (order map[string]any, fields []formField, err error) {
	id := r.PathValue("id")
	var o struct {
		ID          string         `json:"id"`
		DisplayName string         `json:"display_name"`
		Project     string         `json:"project"`
		CatalogItem string         `json:"catalog_item_id"`
		Attributes  map[string]any `json:"attributes"`
	}
	if err := c.call(r, s, http.MethodGet, "/api/v1/catalog-item-instances/"+url.PathEscape(id), nil, &o); err != nil {
		return nil, nil, err
	}
	_, fields, err = c.orderForm(r, s, o.CatalogItem)
	if err != nil {
		return nil, nil, err
	}
	var current map[string]any
	for _, set := range []string{"requested", "candidate", "active"} {
		if m, ok := o.Attributes[set].(map[string]any); ok {
			current = m
			break
		}
	}
	for i := range fields {
		if v := valueAt(current, fields[i].Path); v != nil {
			fields[i].Value, fields[i].Checked = "", false
			fields[i].show(v)
		}
	}
	return map[string]any{"ID": o.ID, "DisplayName": o.DisplayName, "Project": o.Project, "CatalogItem": o.CatalogItem}, fields, nil
}

// updatePage shows an order's update form.
func (c *Console) updatePage(w http.ResponseWriter, r *http.Request, s *session) error {
	order, fields, err := c.updateForm(r, s)
	if err != nil {
		return err
	}
	c.render(w, "update", s, map[string]any{"Order": order, "Fields": fields})
	return nil
}

// update sends the fields the form changed as the order's edits.
func (c *Console) update(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := checkCSRF(r, s); err != nil {
		return err
	}
	order, fields, err := c.updateForm(r, s)
	if err != nil {
		return err
	}
	was := make([]formField, len(fields))
	copy(was, fields)
	values, ok := userValues(r, fields)
	data := map[string]any{"Order": order, "Fields": fields}
	if moreRows(r) {
		c.render(w, "update", s, data)
		return nil
	}
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		c.render(w, "update", s, data)
		return nil
	}
	changed := map[string]bool{}
	for i, f := range fields {
		if f.Editable && (strings.TrimSpace(was[i].Value) != f.Value || f.Kind == "checkbox" && was[i].Checked != f.Checked) {
			changed[f.Path] = true
		}
	}
	var edits []map[string]any
	for _, v := range values {
		if p, _ := v["path"].(string); changed[p] {
			edits = append(edits, v)
		}
	}
	id, _ := order["ID"].(string)
	if len(edits) == 0 {
		http.Redirect(w, r, orderURL(s, id, "Nothing changed."), http.StatusSeeOther)
		return nil
	}
	err = c.call(r, s, http.MethodPatch, "/api/v1/catalog-item-instances/"+url.PathEscape(id), map[string]any{"edits": edits}, nil)
	if apiErr, ok := refusal(err); ok {
		placeFieldErrors(fields, edits, apiErr)
		data["Error"] = apiErr
		w.WriteHeader(apiErr.Status)
		c.render(w, "update", s, data)
		return nil
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, orderURL(s, id, "Update requested."), http.StatusSeeOther)
	return nil
}
