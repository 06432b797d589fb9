package console

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// providersPage lists the registered providers with their health, labels,
// capacity and live instances.
func (c *Console) providersPage(w http.ResponseWriter, r *http.Request, s *session) error {
	var page struct {
		Results []struct {
			ID           string            `json:"id"`
			Name         string            `json:"name"`
			Endpoint     string            `json:"endpoint"`
			Status       string            `json:"status"`
			ServiceTypes []string          `json:"service_types"`
			Metadata     map[string]string `json:"metadata"`
			Operations   []string          `json:"operations"`
			Capacity     map[string]int64  `json:"capacity"`
			Health       struct {
				Message string `json:"message"`
			} `json:"health"`
			LiveInstances int64 `json:"live_instances"`
		} `json:"results"`
		NextPageToken string `json:"next_page_token"`
	}
	if err := c.call(r, s, http.MethodGet, query("/api/v1/providers", map[string]string{"max_page_size": "100",
		"page_token": trimmed(r, "page")}), nil, &page); err != nil {
		return err
	}
	c.render(w, "providers", s, map[string]any{"Providers": page.Results,
		"Next": nextPage("/ui/providers", page.NextPageToken, nil)})
	return nil
}

// cleanupTask is a deferred deletion as the cleanup page shows it.
type cleanupTask struct {
	ID           string    `json:"id"`
	InstanceID   string    `json:"instance_id"`
	ProviderName string    `json:"provider_name"`
	Status       string    `json:"status"`
	RetryCount   int       `json:"retry_count"`
	LastError    string    `json:"last_error"`
	CreateTime   time.Time `json:"create_time"`
}

// operationsPage lists the operations (oldest first, as the API does) and the cleanup
// tasks, failed ones with a retry button.
func (c *Console) operationsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	var ops struct {
		Results []struct {
			ID         string         `json:"id"`
			Done       bool           `json:"done"`
			Metadata   map[string]any `json:"metadata"`
			Error      *apiError      `json:"error"`
			CreateTime time.Time      `json:"create_time"`
		} `json:"results"`
		NextPageToken string `json:"next_page_token"`
	}
	if err := c.call(r, s, http.MethodGet, query("/api/v1/operations", map[string]string{"max_page_size": "50",
		"page_token": trimmed(r, "page")}), nil, &ops); err != nil {
		return err
	}
	var tasks struct {
		Results []cleanupTask `json:"results"`
	}
	if c.isAdmin(r, s) { // cleanup tasks span every project: an operator's
		if err := c.call(r, s, http.MethodGet, "/api/v1/cleanup-tasks?max_page_size=50", nil, &tasks); err != nil {
			return err
		}
	}
	c.render(w, "operations", s, map[string]any{"Operations": ops.Results, "Tasks": tasks.Results,
		"Next": nextPage("/ui/operations", ops.NextPageToken, nil), "Notice": trimmed(r, "notice"), "Project": s.project})
	return nil
}

// member is one member of an operation's metadata or response.
type member struct{ Name, Value string }

// members lists m's members by name, each a string as it is, anything
// else as JSON.
func members(m map[string]any, leaveOut ...string) []member {
	var out []member
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(leaveOut, k) {
			out = append(out, member{Name: k, Value: elementText(m[k])})
		}
	}
	return out
}

// operationPage shows one operation: what it does and to what, whether it
// is done, how it ended (its error, or its response), and every member of
// its metadata (a rehydration's old and new instances, a rotation's
// provider).
func (c *Console) operationPage(w http.ResponseWriter, r *http.Request, s *session) error {
	var op struct {
		ID         string         `json:"id"`
		Done       bool           `json:"done"`
		Metadata   map[string]any `json:"metadata"`
		Error      *apiError      `json:"error"`
		Response   map[string]any `json:"response"`
		CreateTime time.Time      `json:"create_time"`
		UpdateTime time.Time      `json:"update_time"`
	}
	if err := c.call(r, s, http.MethodGet, "/api/v1/operations/"+url.PathEscape(r.PathValue("id")), nil, &op); err != nil {
		return err
	}
	c.render(w, "operation", s, map[string]any{"Op": op, "Project": s.project,
		"Members": members(op.Metadata, "kind", "target"), "Response": members(op.Response)})
	return nil
}

// retryTask revives a failed cleanup task.
func (c *Console) retryTask(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := checkCSRF(r, s); err != nil {
		return err
	}
	id := r.PathValue("id")
	if err := c.call(r, s, http.MethodPost, "/api/v1/cleanup-tasks/"+url.PathEscape(id)+":retry", nil, nil); err != nil {
		return err
	}
	http.Redirect(w, r, query("/ui/operations", map[string]string{"notice": "Cleanup task " + id + " retried."}), http.StatusSeeOther)
	return nil
}

// nextPage links the next page of path, keeping filters; "" at the end.
func nextPage(path, token string, filters map[string]string) string {
	if token == "" {
		return ""
	}
	q := map[string]string{"page": token}
	for k, v := range filters {
		q[k] = v
	}
	return query(path, q)
}
