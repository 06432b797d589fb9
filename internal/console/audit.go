package console

import (
	"net/http"
	"time"
)

// auditPage lists the audit log, oldest first (as the API does), filtered by action, target
// and actor (the API's filters; admins only, as the API decides).
func (c *Console) auditPage(w http.ResponseWriter, r *http.Request, s *session) error {
	filter := map[string]string{"action": trimmed(r, "action"), "target": trimmed(r, "target"), "actor": trimmed(r, "actor")}
	params := map[string]string{"max_page_size": "50", "page_token": trimmed(r, "page")}
	for k, v := range filter {
		params[k] = v
	}
	var page struct {
		Results []struct {
			Time  time.Time `json:"time"`
			Actor struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			} `json:"actor"`
			Action    string `json:"action"`
			Target    string `json:"target"`
			Project   string `json:"project"`
			Outcome   string `json:"outcome"`
			RequestID string `json:"request_id"`
		} `json:"results"`
		NextPageToken string `json:"next_page_token"`
	}
	if err := c.call(r, s, http.MethodGet, query("/api/v1/audit-events", params), nil, &page); err != nil {
		return err
	}
	c.render(w, "audit", s, map[string]any{"Events": page.Results, "Filter": filter,
		"Next": nextPage("/ui/audit", page.NextPageToken, filter)})
	return nil
}
