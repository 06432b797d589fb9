package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"sigs.k8s.io/yaml"
)

// A resource editor shows a service type's or a catalog item's definition
// (JSON, or YAML with ?format=yaml) in a text area and sends what the admin
// saves, in either, to the API as JSON: the API validates it, and its
// errors (each field named) show above the text.

// editedKind is a kind of resource the editor edits.
type editedKind struct {
	Title      string // "service type"
	Collection string // API collection path: /api/v1/service-types
	Page       string // console path: /ui/service-types
	Update     string // the API's method for a change: PUT or PATCH
}

var (
	serviceTypeKind = editedKind{Title: "service type", Collection: "/api/v1/service-types", Page: "/ui/service-types",
		Update: http.MethodPut}
	catalogItemKind = editedKind{Title: "catalog item", Collection: "/api/v1/catalog-items", Page: "/ui/catalog",
		Update: http.MethodPatch}
)

// editPage shows the resource {id} ("new": an empty one) in the editor.
func (c *Console) editPage(kind editedKind) func(w http.ResponseWriter, r *http.Request, s *session) error {
	return func(w http.ResponseWriter, r *http.Request, s *session) error {
		id, format := r.PathValue("id"), editorFormat(r)
		var v any = map[string]any{"id": ""}
		if id != "new" {
			if err := c.call(r, s, http.MethodGet, kind.Collection+"/"+url.PathEscape(id), nil, &v); err != nil {
				return err
			}
		}
		b, _ := json.MarshalIndent(v, "", "  ") // decoded JSON always encodes
		text := string(b)
		if format == "yaml" {
			y, _ := yaml.JSONToYAML(b) // JSON is YAML
			text = string(y)
		}
		c.render(w, "editor", s, map[string]any{"Kind": kind, "ID": id, "Text": text, "Notice": trimmed(r, "notice"),
			"Admin": c.isAdmin(r, s), "Format": format})
		return nil
	}
}

// saveEdit sends the editor's JSON to the API: a create for "new", else
// the kind's update; a refusal shows above the text, which is kept.
func (c *Console) saveEdit(kind editedKind) func(w http.ResponseWriter, r *http.Request, s *session) error {
	return func(w http.ResponseWriter, r *http.Request, s *session) error {
		if err := checkCSRF(r, s); err != nil {
			return err
		}
		id, text, format := r.PathValue("id"), r.PostFormValue("definition"), editorFormat(r)
		data := map[string]any{"Kind": kind, "ID": id, "Text": text, "Admin": true, "Format": format}
		body, bad := parseDefinition(text)
		if bad != nil {
			data["Error"] = bad
			w.WriteHeader(http.StatusBadRequest)
			c.render(w, "editor", s, data)
			return nil
		}
		method, path := kind.Update, kind.Collection+"/"+url.PathEscape(id)
		if id == "new" {
			newID, _ := body["id"].(string)
			method, path = http.MethodPost, query(kind.Collection, map[string]string{"id": newID})
		}
		// What the API shows but does not take: the id (in the path or
		// the query) and the members it keeps itself.
		for _, member := range []string{"id", "path", "builtin", "create_time", "update_time"} {
			delete(body, member)
		}
		var saved struct {
			ID string `json:"id"`
		}
		err := c.call(r, s, method, path, body, &saved)
		if apiErr, ok := refusal(err); ok {
			data["Error"] = apiErr
			w.WriteHeader(apiErr.Status)
			c.render(w, "editor", s, data)
			return nil
		}
		if err != nil {
			return err
		}
		http.Redirect(w, r, query(kind.Page+"/"+url.PathEscape(saved.ID)+"/edit", map[string]string{"notice": "Saved.",
			"format": map[string]string{"yaml": "yaml"}[format]}), http.StatusSeeOther)
		return nil
	}
}

// editorFormat is the editor's format: "yaml" when asked for, else "json".
func editorFormat(r *http.Request) string {
	if trimmed(r, "format") == "yaml" {
		return "yaml"
	}
	return "json"
}

// parseDefinition reads an edited definition: a JSON object, or YAML (text
// that does not start with "{"); numbers are kept as written.
func parseDefinition(text string) (map[string]any, *apiError) {
	reason, doc := "INVALID_JSON", []byte(text)
	if !strings.HasPrefix(strings.TrimSpace(text), "{") {
		reason = "INVALID_YAML"
		var err error
		if doc, err = yaml.YAMLToJSON(doc); err != nil {
			return nil, &apiError{Status: http.StatusBadRequest, Reason: reason, Detail: err.Error()}
		}
	}
	var body map[string]any
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		return nil, &apiError{Status: http.StatusBadRequest, Reason: reason, Detail: err.Error()}
	}
	if body == nil {
		return nil, &apiError{Status: http.StatusBadRequest, Reason: reason, Detail: "the definition is not an object"}
	}
	return body, nil
}

// serviceTypesPage lists the service types.
func (c *Console) serviceTypesPage(w http.ResponseWriter, r *http.Request, s *session) error {
	var page struct {
		Results []struct {
			ID                string   `json:"id"`
			Lifecycle         string   `json:"lifecycle"`
			ParentServiceType *string  `json:"parent_service_type"`
			RequiredAdapters  []string `json:"required_adapters"`
			Runtime           *struct {
				Kind string `json:"kind"`
			} `json:"runtime"`
			Builtin bool `json:"builtin"`
		} `json:"results"`
		NextPageToken string `json:"next_page_token"`
	}
	if err := c.call(r, s, http.MethodGet, query("/api/v1/service-types", map[string]string{"max_page_size": "100",
		"page_token": trimmed(r, "page")}), nil, &page); err != nil {
		return err
	}
	c.render(w, "servicetypes", s, map[string]any{"Types": page.Results, "Admin": c.isAdmin(r, s),
		"Next": nextPage("/ui/service-types", page.NextPageToken, nil)})
	return nil
}
