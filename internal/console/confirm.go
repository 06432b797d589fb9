package console

import (
	"net/http"
	"net/url"
	"slices"
)

// An order's actions that cannot be taken back (Delete, Force delete) or
// that replace what runs (Rehydrate, Rotate credentials) are asked for on a
// page of their own first, which says what will happen; its form, and
// only its form, carries confirm=yes. No script is needed, and a form
// sent without it (a stale page, a tool replaying a POST) acts not: it
// leads to that page.

// confirmAction is an order action asked for on a confirmation page.
type confirmAction struct {
	Name   string // its path under the order, and the page's ?action=
	Title  string
	Danger bool // it removes what cannot be brought back
}

var confirmActions = []confirmAction{
	{Name: "rehydrate", Title: "Rehydrate"},
	{Name: "rotate-credentials", Title: "Rotate credentials"},
	{Name: "delete", Title: "Delete", Danger: true},
	{Name: "force-delete", Title: "Force delete", Danger: true},
}

// confirmURL is the page that asks for action on order id.
func confirmURL(s *session, id, action string) string {
	return query("/ui/orders/"+url.PathEscape(id)+"/confirm", map[string]string{"action": action, "project": s.project})
}

// confirmPage says what the action will do to the order, with the form
// that does it and a way back.
func (c *Console) confirmPage(w http.ResponseWriter, r *http.Request, s *session) error {
	at := slices.IndexFunc(confirmActions, func(a confirmAction) bool { return a.Name == trimmed(r, "action") })
	if at < 0 {
		return &apiError{Status: http.StatusNotFound, Reason: "NOT_FOUND", Detail: "there is no such action on an order"}
	}
	id := r.PathValue("id")
	var o orderDetail
	if err := c.call(r, s, http.MethodGet, "/api/v1/catalog-item-instances/"+url.PathEscape(id), nil, &o); err != nil {
		return err
	}
	c.render(w, "confirm", s, map[string]any{"Order": o, "Action": confirmActions[at]})
	return nil
}

// confirmedPost checks the form of action on an order: its CSRF token,
// then that its confirmation page sent it (confirm=yes); without that, the
// browser is sent to the page and nothing is done. ok says to go on, with
// the order's id.
func confirmedPost(w http.ResponseWriter, r *http.Request, s *session, action string) (id string, ok bool, err error) {
	if err := checkCSRF(r, s); err != nil {
		return "", false, err
	}
	id = r.PathValue("id")
	if r.PostFormValue("confirm") != "yes" {
		http.Redirect(w, r, confirmURL(s, id, action), http.StatusSeeOther)
		return "", false, nil
	}
	return id, true, nil
}

// startOperation is the handler of a confirmed action that starts an
// operation on the order (POST …:method: a rehydration, a rotation) and
// goes back to its page, the notice naming the operation.
func (c *Console) startOperation(action, method, started string) func(w http.ResponseWriter, r *http.Request, s *session) error {
	return func(w http.ResponseWriter, r *http.Request, s *session) error {
		id, ok, err := confirmedPost(w, r, s, action)
		if !ok {
			return err
		}
		var op struct {
			ID string `json:"id"`
		}
		if err := c.call(r, s, http.MethodPost, "/api/v1/catalog-item-instances/"+url.PathEscape(id)+":"+method, nil, &op); err != nil {
			return err
		}
		http.Redirect(w, r, orderURL(s, id, started+" (operation "+op.ID+")."), http.StatusSeeOther)
		return nil
	}
}

// handsOutCredentials says whether o's provider registered the
// credentials operation, so that its page offers Rotate credentials. A
// provider the caller may not read offers none: the API decides anyway.
func (c *Console) handsOutCredentials(r *http.Request, s *session, o orderDetail) bool {
	if o.ProviderName == "" || o.DeletedAt != nil {
		return false
	}
	var p struct {
		Operations []string `json:"operations"`
	}
	err := c.call(r, s, http.MethodGet, "/api/v1/providers/"+url.PathEscape(o.ProviderName), nil, &p)
	return err == nil && slices.Contains(p.Operations, "credentials")
}
