package console

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// orderDetail is what the order page shows of an order.
type orderDetail struct {
	orderRow
	Status        string         `json:"status"`
	StatusMessage string         `json:"status_message"`
	InstanceID    string         `json:"instance_id"`
	Version       int64          `json:"version"`
	Lifecycle     string         `json:"lifecycle"`
	DeletedAt     *time.Time     `json:"deleted_at"`
	LastError     string         `json:"last_error"`
	Outputs       map[string]any `json:"outputs"`
	Attributes    map[string]any `json:"attributes"`
	Conditions    []condition    `json:"conditions"`
}

// eventRow is one entry of an order's lifecycle log.
type eventRow struct {
	Version   int64     `json:"version"`
	Time      time.Time `json:"time"`
	Trigger   string    `json:"trigger"`
	From      string    `json:"from"`
	To        string    `json:"to"`
	Operation string    `json:"operation"`
	Error     string    `json:"error"`
	// Message says what a rehydrate or cleanup event records.
	Message string `json:"message"`
}

// attributeRow is one field of the attribute sets, side by side.
type attributeRow struct {
	Path                        string
	Candidate, Active, Rollback string
	Differs                     bool
}

// orderPage shows one order: its conditions, outputs, attribute sets side
// by side and its lifecycle log, with the actions on it.
func (c *Console) orderPage(w http.ResponseWriter, r *http.Request, s *session) error {
	id := r.PathValue("id")
	live := c.liveURL(s, id)
	var o orderDetail
	if err := c.call(r, s, http.MethodGet, "/api/v1/catalog-item-instances/"+url.PathEscape(id), nil, &o); err != nil {
		return err
	}
	var events struct {
		Results []eventRow `json:"results"`
	}
	if err := c.call(r, s, http.MethodGet, "/api/v1/catalog-item-instances/"+url.PathEscape(id)+"/events?max_page_size=100",
		nil, &events); err != nil {
		return err
	}
	slices.Reverse(events.Results) // newest first
	sayStatusOnce(&o, events.Results)
	sections, err := c.orderSections(r, s, o)
	if err != nil {
		return err
	}
	targets := c.apiTargets(r, s, o.Lifecycle, o.State)
	outputs := slices.Sorted(maps.Keys(o.Outputs))
	c.render(w, "order", s, map[string]any{"Live": live, "Order": o, "Events": events.Results, "OutputNames": outputs,
		"Attributes": attributeRows(o.Attributes), "Targets": targets, "Admin": o.DeletedAt != nil && c.isAdmin(r, s),
		"Notice": trimmed(r, "notice"), "Sections": sections, "Credentials": c.handsOutCredentials(r, s, o)})
	return nil
}

// sayStatusOnce cuts the repeats of o's status message, which the page
// shows as its Status, out of its last error, its conditions' messages and
// its lifecycle log's errors. The lifecycle quotes the message there
// ("resource … is FAILED: <message>"), and a failure detail makes it long:
// a text that ends ": <message>" loses that end, and one that is only the
// message says "(see Status)".
func sayStatusOnce(o *orderDetail, events []eventRow) {
	once := func(text *string) {
		switch msg := o.StatusMessage; {
		case msg == "":
		case *text == msg:
			*text = "(see Status)"
		default:
			*text, _ = strings.CutSuffix(*text, ": "+msg)
		}
	}
	once(&o.LastError)
	for i := range o.Conditions {
		once(&o.Conditions[i].Message)
	}
	for i := range events {
		once(&events[i].Error)
	}
}

// attributeRows lays the candidate, active and rollback sets side by side,
// one row per leaf field, marking the rows whose sets differ.
func attributeRows(sets map[string]any) []attributeRow {
	flat := map[string]map[string]string{}
	for _, name := range []string{"candidate", "active", "rollback"} {
		flat[name] = map[string]string{}
		if set, ok := sets[name].(map[string]any); ok {
			flatten("", set, flat[name])
		}
	}
	paths := map[string]bool{}
	for _, f := range flat {
		for p := range f {
			paths[p] = true
		}
	}
	var rows []attributeRow
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		row := attributeRow{Path: p, Candidate: flat["candidate"][p], Active: flat["active"][p], Rollback: flat["rollback"][p]}
		var seen []string
		for _, v := range []string{row.Candidate, row.Active, row.Rollback} {
			if v != "" {
				seen = append(seen, v)
			}
		}
		row.Differs = len(slices.Compact(slices.Sorted(slices.Values(seen)))) > 1
		rows = append(rows, row)
	}
	return rows
}

// flatten writes v's leaves into out by dotted path, each as JSON.
func flatten(prefix string, v map[string]any, out map[string]string) {
	for k, x := range v {
		p := strings.TrimPrefix(prefix+"."+k, ".")
		if m, ok := x.(map[string]any); ok && len(m) > 0 {
			flatten(p, m, out)
			continue
		}
		b, _ := json.Marshal(x) // decoded JSON always encodes
		out[p] = string(b)
	}
}

// deleteOrder asks for the order's deletion and goes back to its page.
func (c *Console) deleteOrder(w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok, err := confirmedPost(w, r, s, "delete")
	if !ok {
		return err
	}
	if err := c.call(r, s, http.MethodDelete, "/api/v1/catalog-item-instances/"+url.PathEscape(id), nil, nil); err != nil {
		return err
	}
	http.Redirect(w, r, orderURL(s, id, "Deletion requested."), http.StatusSeeOther)
	return nil
}
