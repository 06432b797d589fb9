package console_test

import (
	"maps"
	"net/http"
	"regexp"
	"testing"

	"github.com/stewardhq/steward/internal/console"
	"github.com/stewardhq/steward/internal/ctl"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 46, item 4: an item no healthy provider serves does not look
// orderable on the catalog page: it says so, with the command that starts
// its provider, while an item a provider serves keeps its Order button.
func TestCatalog_ItemsWithoutAProviderSaySo(t *testing.T) {
	t.Parallel()
	if got, want := console.ReferenceProviders, ctl.ReferenceProviders(); !maps.Equal(got, want) {
		t.Errorf("the console's reference providers %v differ from get items' %v", got, want)
	}
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, func(c *server.Config) { c.ProcessProvider, c.ProcessProviderNoOp = true, true })
		waitForProvider(t, s)
		page := newBrowser(t, s.URL()).get("/ui/catalog")
		if page.status != http.StatusOK {
			t.Fatalf("catalog page: %d %s", page.status, page.body)
		}
		card := func(id string) string {
			m := regexp.MustCompile(`(?s)<li class="card[^"]*">(?:(?:[^<]|<[^/]|</[^l])*?)` + id + ` · .*?</li>`).FindString(page.body)
			if m == "" {
				t.Fatalf("no card of %s in:\n%s", id, page.body)
			}
			return m
		}
		if c := card("sleeper"); !regexp.MustCompile(`class="button primary" href="/ui/catalog/sleeper/order"`).MatchString(c) {
			t.Errorf("the sleeper card, which the in-process provider serves, has no Order button:\n%s", c)
		}
		c := card("web-app")
		for _, want := range []string{`card unserved`, `No healthy provider serves container-app`, `<code>steward provider kubernetes</code>`} {
			if !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(c) {
				t.Errorf("the web-app card, which no provider serves, lacks %q:\n%s", want, c)
			}
		}
	})
}
