package console_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
)

// Issue 25: an order's page offers the states its lifecycle lets a request
// move it to from where it is (an update a policy rejected: back to up),
// Set state moves it there (refused without the CSRF token, and at a stale
// version with the API's 409), and a deleting order offers Force delete,
// which needs a reason.
func TestConsole_SetStateAndForceDelete(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider, c.ProcessProviderNoOp = true, true })
	waitForProvider(t, s)
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=gated", map[string]any{"catalog_item_id": "sleeper"}).Want(t, http.StatusCreated)
	waitState(t, s, "gated", "up")
	s.Do(t, "POST", "/api/v1/policies?id=no-never", map[string]any{"display_name": "no never", "policy_type": "GLOBAL", "priority": 1,
		"rego_code": "package nonever\nmain := {\"rejected\": true, \"rejection_reason\": \"processes must restart\"} if { input.spec.restart_policy == \"never\" }",
	}).Want(t, http.StatusCreated)
	s.Do(t, "PATCH", "/api/v1/catalog-item-instances/gated", map[string]any{
		"edits": []map[string]any{{"path": "restart_policy", "value": "never"}}}).Want(t, http.StatusOK)
	waitState(t, s, "gated", "update_rejected")
	b := newBrowser(t, s.URL())

	p := b.get("/ui/orders/gated")
	if !strings.Contains(p.body, `action="/ui/orders/gated/set-state?project=default"`) || !strings.Contains(p.body, "<option>up</option>") {
		t.Fatalf("the page of an order whose update was rejected offers no way back to up:\n%s", p.body)
	}
	if strings.Contains(p.body, "force-delete") {
		t.Error("the page of an order not being deleted offers Force delete")
	}
	var o struct {
		Version int64 `json:"version"`
	}
	s.Do(t, "GET", "/api/v1/catalog-item-instances/gated", nil).Want(t, http.StatusOK).JSON(t, &o)
	form := func(version int64) url.Values {
		return url.Values{"csrf": {b.csrf()}, "target_state": {"up"}, "current_version": {strconv.FormatInt(version, 10)}}
	}
	if p := b.post("/ui/orders/gated/set-state", url.Values{"target_state": {"up"}, "current_version": {strconv.FormatInt(o.Version, 10)}}); p.status != http.StatusForbidden {
		t.Errorf("set state without the CSRF token: %d, want 403", p.status)
	}
	if p := b.post("/ui/orders/gated/set-state", form(o.Version-1)); p.status != http.StatusConflict {
		t.Errorf("set state at a stale version: %d, want the API's 409", p.status)
	}
	if p := b.post("/ui/orders/gated/set-state", form(o.Version)); p.status != http.StatusSeeOther {
		t.Fatalf("set state: %d %s", p.status, p.body)
	}
	waitState(t, s, "gated", "up")

	// Once its deletion is asked for, the page offers Force delete; the
	// API wants a reason.
	s.Do(t, "DELETE", "/api/v1/catalog-item-instances/gated", nil).Want(t, http.StatusAccepted)
	// Its button leads to a confirmation page (issue 46, item 11), which
	// asks for the reason; the action wants that page's confirm=yes.
	if p := b.get("/ui/orders/gated"); !strings.Contains(p.body, `<a class="button danger" href="/ui/orders/gated/confirm?action=force-delete&amp;project=default">Force delete…</a>`) {
		t.Fatalf("the page of a deleting order offers no Force delete:\n%s", p.body)
	}
	confirm := b.get("/ui/orders/gated/confirm?action=force-delete&project=default")
	for _, want := range []string{`action="/ui/orders/gated/force-delete?project=default"`, `<input type="hidden" name="confirm" value="yes">`,
		`<input id="reason" name="reason" required`, `<button type="submit" class="danger-fill">Force delete</button>`} {
		if !strings.Contains(confirm.body, want) {
			t.Errorf("the force delete's confirmation page has no %s", want)
		}
	}
	if p := b.post("/ui/orders/gated/force-delete", url.Values{"csrf": {b.csrf()}, "reason": {"stuck in a test"}}); p.status != http.StatusSeeOther ||
		p.header.Get("Location") != "/ui/orders/gated/confirm?action=force-delete" {
		t.Errorf("force delete without its confirmation: %d to %q, want 303 to the confirmation page", p.status, p.header.Get("Location"))
	}
	if p := b.post("/ui/orders/gated/force-delete", url.Values{"csrf": {b.csrf()}, "confirm": {"yes"}}); p.status != http.StatusBadRequest {
		t.Errorf("force delete without a reason: %d, want the API's 400", p.status)
	}
	if p := b.post("/ui/orders/gated/force-delete", url.Values{"csrf": {b.csrf()}, "confirm": {"yes"}, "reason": {"stuck in a test"}}); p.status != http.StatusSeeOther {
		t.Errorf("force delete with a reason: %d %s", p.status, p.body)
	}
	poll.Until(t, "the order is removed", func() bool {
		var o struct {
			State string `json:"state"`
		}
		s.Do(t, "GET", "/api/v1/catalog-item-instances/gated?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &o)
		return o.State == "terminated"
	})
}
