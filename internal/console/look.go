package console

import (
	"fmt"
	"net/url"
	"strings"
)

// What the templates share about how things look: the header's
// navigation, names, state badges and links to what operations act on.

// navItem is one page of the header's navigation.
type navItem struct {
	Href, Label string
	Current     bool
}

// nav is the header's navigation; also names the paths under each page
// (a cleanup task's retry is the operations page's).
var nav = []struct {
	navItem
	also string
}{
	{navItem: navItem{Href: "/ui/orders", Label: "Orders"}},
	{navItem: navItem{Href: "/ui/catalog", Label: "Catalog"}},
	{navItem: navItem{Href: "/ui/operations", Label: "Operations"}, also: "/ui/cleanup-tasks"},
	{navItem: navItem{Href: "/ui/providers", Label: "Providers"}},
	{navItem: navItem{Href: "/ui/service-types", Label: "Service types"}},
	{navItem: navItem{Href: "/ui/policies", Label: "Policies"}},
	{navItem: navItem{Href: "/ui/audit", Label: "Audit log"}},
	{navItem: navItem{Href: "/ui/tokens", Label: "Tokens"}},
}

// navFor is the navigation of the page at path, its own page current.
func navFor(path string) []navItem {
	items := make([]navItem, len(nav))
	for i, n := range nav {
		items[i] = n.navItem
		items[i].Current = within(path, n.Href) || n.also != "" && within(path, n.also)
	}
	return items
}

func within(path, page string) bool {
	rest, ok := strings.CutPrefix(path, page)
	return ok && (rest == "" || rest[0] == '/')
}

// otherID is id when name does not already say it: a thing without a
// display name, or named by its id, is shown by its id once.
func otherID(name, id string) string {
	if name == "" || name == id {
		return ""
	}
	return id
}

// tone is the colour of a state or health badge: ok (up, healthy), bad
// (failed, rejected, unhealthy), off (terminated, unknown) or busy (on
// its way: creating, deleting, an update).
func tone(state string) string {
	switch {
	case state == "up" || state == "healthy" || state == "succeeded" || state == "done":
		return "ok"
	case state == "terminated" || state == "unknown" || state == "":
		return "off"
	case state == "update_rejected": // the order runs on as it was
		return "busy"
	case strings.Contains(state, "fail") || strings.Contains(state, "reject") || state == "unhealthy" || state == "unavailable":
		return "bad"
	}
	return "busy"
}

// hasList says whether a form has a list (its More rows buttons need the
// form's own submit button first).
func hasList(fields []formField) bool {
	for _, f := range fields {
		if f.Editable && f.Kind == "list" || hasList(f.Sub) {
			return true
		}
	}
	return false
}

// link is a text, linked when Href is set.
type link struct{ Text, Href string }

// targetLink links what an operation acts on (its metadata's target) to
// its console page in project, when it has one: only orders do.
func targetLink(target any, project string) link {
	var l link
	if target != nil {
		l.Text = fmt.Sprint(target)
	}
	if id, ok := strings.CutPrefix(l.Text, "catalog-item-instances/"); ok && id != "" && !strings.Contains(id, "/") {
		l.Href = query("/ui/orders/"+url.PathEscape(id), map[string]string{"project": project})
	}
	return l
}
