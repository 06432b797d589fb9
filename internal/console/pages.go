package console

import (
	"errors"
	"net/http"
	"time"
)

// signinPage asks for a token.
func (c *Console) signinPage(w http.ResponseWriter, _ *http.Request, s *session) error {
	c.render(w, "signin", s, nil)
	return nil
}

// signin checks a pasted token with the API, then starts a session for its
// principal: the cookie holds the session's id, never the token. The
// browser gets a new CSRF secret with it, so a value planted in its CSRF
// cookie before the sign-in is worth nothing after.
func (c *Console) signin(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := checkCSRF(r, s); err != nil {
		return err
	}
	token := trimmed(r, "token")
	refused := func() error {
		w.WriteHeader(http.StatusUnauthorized)
		c.render(w, "signin", s, map[string]any{"Error": "That token is not accepted."})
		return nil
	}
	if token == "" {
		return refused()
	}
	// The API authenticates it first, as any client's token: a failure
	// counts against the token and the address (429 past the limits).
	try := &session{bearer: token, csrf: s.csrf}
	var apiErr *apiError
	err := c.call(r, try, http.MethodGet, "/api/v1/catalog-items?max_page_size=1", nil, nil)
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusUnauthorized {
		return refused()
	}
	if err != nil {
		return err
	}
	id, expires, err := c.sessions.Start(r.Context(), token)
	if errors.Is(err, ErrSignedOut) { // revoked since the check
		return refused()
	}
	if err != nil {
		return err
	}
	if s.id != "" { // the session this browser had ends
		if err := c.sessions.End(r.Context(), s.id); err != nil {
			return err
		}
	}
	http.SetCookie(w, cookie(r, sessionCookie, id, max(int(expires.Sub(c.now()).Seconds()), 1)))
	newCSRF(w, r)
	http.Redirect(w, r, "/ui/orders", http.StatusSeeOther)
	return nil
}

// signout ends the session: its row is deleted, so the cookie's value
// opens nothing even if kept (the token it signed in with stays valid).
func (c *Console) signout(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := checkCSRF(r, s); err != nil {
		return err
	}
	if s.id != "" {
		if err := c.sessions.End(r.Context(), s.id); err != nil {
			return err
		}
	}
	http.SetCookie(w, cookie(r, sessionCookie, "", -1))
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
	return nil
}

// orderRow is what the orders page shows of an order.
type orderRow struct {
	ID           string    `json:"id"`
	DisplayName  string    `json:"display_name"`
	CatalogItem  string    `json:"catalog_item_id"`
	State        string    `json:"state"`
	ProviderName string    `json:"provider_name"`
	Project      string    `json:"project"`
	CreateTime   time.Time `json:"create_time"`
	Conditions   []struct {
		Type   string `json:"type"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"conditions"`
}

// Condition returns the status and reason of the condition named, or "".
func (o orderRow) Condition(name string) string {
	for _, c := range o.Conditions {
		if c.Type == name {
			return c.Status + " (" + c.Reason + ")"
		}
	}
	return ""
}

// ordersPage lists orders a page at a time, newest first, filtered by
// state, catalog item and label, in one project or (for admins, "*") all.
func (c *Console) ordersPage(w http.ResponseWriter, r *http.Request, s *session) error {
	live := c.liveURL(s, "")
	filter := map[string]string{"state": trimmed(r, "state"), "catalog_item_id": trimmed(r, "item"),
		"label": trimmed(r, "label")}
	var page struct {
		Results       []orderRow `json:"results"`
		NextPageToken string     `json:"next_page_token"`
	}
	// Newest first: the order a user looks for is most often the last one
	// made. The Next page link's token is one of this order (the API
	// refuses it with another), and every page asks for it.
	params := map[string]string{"max_page_size": "25", "page_token": trimmed(r, "page"),
		"order_by": "create_time desc"}
	for k, v := range filter {
		params[k] = v
	}
	if err := c.call(r, s, http.MethodGet, query("/api/v1/catalog-item-instances", params), nil, &page); err != nil {
		return err
	}
	shown := map[string]string{"state": filter["state"], "item": filter["catalog_item_id"], "label": filter["label"],
		"project": s.project}
	c.render(w, "orders", s, map[string]any{"Live": live, "Orders": page.Results,
		"Next": nextPage("/ui/orders", page.NextPageToken, shown), "Filter": shown})
	return nil
}

// catalogPage lists the catalog items.
func (c *Console) catalogPage(w http.ResponseWriter, r *http.Request, s *session) error {
	var page struct {
		Results []struct {
			ID          string `json:"id"`
			DisplayName string `json:"display_name"`
			ServiceType string `json:"service_type"`
		} `json:"results"`
		NextPageToken string `json:"next_page_token"`
	}
	if err := c.call(r, s, http.MethodGet, query("/api/v1/catalog-items", map[string]string{"max_page_size": "100",
		"page_token": trimmed(r, "page")}), nil, &page); err != nil {
		return err
	}
	// Issue 46, item 4: an item no healthy provider serves must not look
	// orderable; best effort, as the catalog is readable without them.
	served, known := c.servedTypes(r, s)
	type card struct {
		ID, DisplayName, ServiceType string
		// Unserved is set when no healthy provider serves the type; Start
		// is the command that starts its reference provider, if any.
		Unserved bool
		Start    string
	}
	cards := make([]card, len(page.Results))
	for i, it := range page.Results {
		cards[i] = card{ID: it.ID, DisplayName: it.DisplayName, ServiceType: it.ServiceType,
			Unserved: known && !served[it.ServiceType], Start: ReferenceProviders[it.ServiceType]}
	}
	c.render(w, "catalog", s, map[string]any{"Items": cards, "Admin": c.isAdmin(r, s), "Next": nextPage("/ui/catalog", page.NextPageToken, nil)})
	return nil
}

// servedTypes are the service types a healthy provider serves; known is
// false when the providers could not be read.
func (c *Console) servedTypes(r *http.Request, s *session) (served map[string]bool, known bool) {
	served = map[string]bool{}
	token := ""
	for range 10 { // 1,000 providers: more than a catalog page needs
		var page struct {
			Results []struct {
				ServiceTypes []string `json:"service_types"`
			} `json:"results"`
			NextPageToken string `json:"next_page_token"`
		}
		if err := c.call(r, s, http.MethodGet, query("/api/v1/providers", map[string]string{"status": "healthy",
			"max_page_size": "100", "page_token": token}), nil, &page); err != nil {
			return nil, false
		}
		for _, p := range page.Results {
			for _, t := range p.ServiceTypes {
				served[t] = true
			}
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	return served, true
}

// ReferenceProviders is the command that starts the reference provider of
// each service type the dev catalog orders (ctl's get items says the same;
// TestCatalog_ItemsWithoutAProviderSaySo holds them together).
var ReferenceProviders = map[string]string{
	"container":          "steward provider process",
	"process-cluster":    "steward provider process",
	"namespaced-process": "steward provider process",
	"postgres-database":  "steward provider postgres",
	"container-app":      "steward provider kubernetes",
}
