package console

import (
	"net/http"
	"net/url"
	"strconv"
)

// apiTargets are the states the order's lifecycle lets a request move it
// to from where it is (its "api" transfers): the page's Set state choices.
// A lifecycle the caller may not read offers none.
func (c *Console) apiTargets(r *http.Request, s *session, lifecycle, state string) []string {
	var def struct {
		Transfers []struct {
			Source  string `json:"source"`
			Target  string `json:"target"`
			Trigger string `json:"trigger"`
		} `json:"transfers"`
	}
	if lifecycle == "" || c.call(r, s, http.MethodGet, "/api/v1/lifecycles/"+url.PathEscape(lifecycle), nil, &def) != nil {
		return nil
	}
	var targets []string
	for _, t := range def.Transfers {
		if t.Trigger == "api" && t.Source == state {
			targets = append(targets, t.Target)
		}
	}
	return targets
}

// setState moves the order along one of its lifecycle's api transfers,
// at the version the page showed (a page out of date gets the API's 409).
func (c *Console) setState(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := checkCSRF(r, s); err != nil {
		return err
	}
	id, target := r.PathValue("id"), trimmed(r, "target_state")
	version, err := strconv.ParseInt(trimmed(r, "current_version"), 10, 64)
	if err != nil {
		return &apiError{Status: http.StatusBadRequest, Reason: "INVALID_ARGUMENT", Detail: "the form carries no version of the order"}
	}
	if err := c.call(r, s, http.MethodPost, "/api/v1/catalog-item-instances/"+url.PathEscape(id)+":setState",
		map[string]any{"target_state": target, "current_version": version}, nil); err != nil {
		return err
	}
	http.Redirect(w, r, orderURL(s, id, "Moved to "+target+"."),
		http.StatusSeeOther)
	return nil
}

// forceDelete removes an order whose deletion is stuck, with the reason the
// admin gave (the API refuses anyone else, and a reason left empty).
func (c *Console) forceDelete(w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok, err := confirmedPost(w, r, s, "force-delete")
	if !ok {
		return err
	}
	if err := c.call(r, s, http.MethodPost, "/api/v1/catalog-item-instances/"+url.PathEscape(id)+":forceDelete",
		map[string]any{"reason": trimmed(r, "reason")}, nil); err != nil {
		return err
	}
	http.Redirect(w, r, orderURL(s, id, "Force-deleted."),
		http.StatusSeeOther)
	return nil
}
