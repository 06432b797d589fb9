package console

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// tokenRow is what the tokens page shows of a token (never its secret).
type tokenRow struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Role      string `json:"role"`
	Project   string `json:"project"`
	Provider  string `json:"provider"`
	Adapter   string `json:"adapter"`
	State     string `json:"state"`
	CreatedBy string `json:"created_by"`
	Principal struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"principal"`
	ExpireTime *time.Time `json:"expire_time"`
}

// tokensPage lists the API tokens the caller may see, with a form that
// creates one.
func (c *Console) tokensPage(w http.ResponseWriter, r *http.Request, s *session) error {
	return c.renderTokens(w, r, s, nil)
}

// renderTokens shows the tokens page; extra carries a created token's
// secret (shown this once) or the refusal of a create.
func (c *Console) renderTokens(w http.ResponseWriter, r *http.Request, s *session, extra map[string]any) error {
	var page struct {
		Results       []tokenRow `json:"results"`
		NextPageToken string     `json:"next_page_token"`
	}
	if err := c.call(r, s, http.MethodGet, query("/api/v1/tokens", map[string]string{"max_page_size": "100",
		"page_token": trimmed(r, "page")}), nil, &page); err != nil {
		return err
	}
	data := map[string]any{"Tokens": page.Results, "Roles": []string{"user", "project_admin", "admin", "service_account"},
		"Next": nextPage("/ui/tokens", page.NextPageToken, nil)}
	for k, v := range extra {
		data[k] = v
	}
	c.render(w, "tokens", s, data)
	return nil
}

// createToken makes a token and shows its secret once; a refusal shows
// on the form.
func (c *Console) createToken(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := checkCSRF(r, s); err != nil {
		return err
	}
	body := map[string]any{"name": trimmed(r, "name"), "role": trimmed(r, "role"), "project": trimmed(r, "project")}
	if ttl := trimmed(r, "ttl_hours"); ttl != "" {
		hours, err := strconv.Atoi(ttl)
		if err != nil || hours < 0 {
			w.WriteHeader(http.StatusBadRequest)
			return c.renderTokens(w, r, s, map[string]any{"Error": &apiError{Status: http.StatusBadRequest,
				Reason: "INVALID_ARGUMENT", Detail: "hours to live: a whole number, 0 for no expiry"}})
		}
		body["ttl_seconds"] = hours * 3600
	}
	var made struct {
		tokenRow
		Token string `json:"token"`
	}
	err := c.call(r, s, http.MethodPost, "/api/v1/tokens", body, &made)
	if apiErr, ok := refusal(err); ok {
		w.WriteHeader(apiErr.Status)
		return c.renderTokens(w, r, s, map[string]any{"Error": apiErr})
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return c.renderTokens(w, r, s, map[string]any{"Created": made.tokenRow, "Secret": made.Token})
}

// revokeToken revokes a token and goes back to the list.
func (c *Console) revokeToken(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := checkCSRF(r, s); err != nil {
		return err
	}
	if err := c.call(r, s, http.MethodDelete, "/api/v1/tokens/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		return err
	}
	http.Redirect(w, r, "/ui/tokens", http.StatusSeeOther)
	return nil
}

// policyRow is what the policies page shows of a policy.
type policyRow struct {
	ID            string            `json:"id"`
	DisplayName   string            `json:"display_name"`
	PolicyType    string            `json:"policy_type"`
	Priority      int               `json:"priority"`
	Enabled       bool              `json:"enabled"`
	LabelSelector map[string]string `json:"label_selector"`
}

// levels orders the policy levels as the chain runs them.
var levels = map[string]int{"GLOBAL": 0, "TENANT": 1, "USER": 2}

// policiesPage lists the policies in the order the chain runs them: by
// level, then priority.
func (c *Console) policiesPage(w http.ResponseWriter, r *http.Request, s *session) error {
	var page struct {
		Results []policyRow `json:"results"`
	}
	// The chain holds every policy; the API's page bound is the limit.
	if err := c.call(r, s, http.MethodGet, "/api/v1/policies?max_page_size=1000", nil, &page); err != nil {
		return err
	}
	slices.SortFunc(page.Results, func(a, b policyRow) int {
		return cmp.Or(cmp.Compare(levels[a.PolicyType], levels[b.PolicyType]), cmp.Compare(a.Priority, b.Priority))
	})
	c.render(w, "policies", s, map[string]any{"Policies": page.Results, "Admin": c.isAdmin(r, s)})
	return nil
}

// enablePolicy turns a policy on or off (enabled=true|false) and goes back
// to the list.
func (c *Console) enablePolicy(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := checkCSRF(r, s); err != nil {
		return err
	}
	enabled := trimmed(r, "enabled") == "true"
	if err := c.call(r, s, http.MethodPatch, "/api/v1/policies/"+url.PathEscape(r.PathValue("id")),
		map[string]any{"enabled": enabled}, nil); err != nil {
		return err
	}
	http.Redirect(w, r, "/ui/policies", http.StatusSeeOther)
	return nil
}
