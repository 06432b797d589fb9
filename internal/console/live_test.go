package console_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// stream opens a live stream as b and returns its events' names, one per
// "event:" line, until the test ends.
func (b *browser) stream(ctx context.Context, path string) (*http.Response, <-chan string) {
	b.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	names := make(chan string, 16)
	go func() {
		defer resp.Body.Close()
		defer close(names)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				names <- name
			}
		}
	}()
	return resp, names
}

func nextEvent(t *testing.T, names <-chan string, what string) {
	t.Helper()
	select {
	case name, ok := <-names:
		if !ok || name != "changed" {
			t.Fatalf("%s: stream ended or sent %q, want a changed event", what, name)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: no changed event within 15s", what)
	}
}

// Issue 25: a page's live stream says "changed" when the orders it shows
// change (any order for the list, its own for an order's page), and a
// caller who may not read the order gets no stream.
func TestConsole_LiveStreamsSayWhenOrdersChange(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, func(c *server.Config) { c.ProcessProvider, c.ProcessProviderNoOp = true, true })
		waitForProvider(t, s)
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=watched", map[string]any{"catalog_item_id": "sleeper"}).
			Want(t, http.StatusCreated)
		waitState(t, s, "watched", "up")
		b := newBrowser(t, s.URL())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()

		resp, list := b.stream(ctx, "/ui/events")
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("GET /ui/events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		_, one := b.stream(ctx, "/ui/events?order=watched")

		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=other", map[string]any{"catalog_item_id": "sleeper"}).
			Want(t, http.StatusCreated)
		nextEvent(t, list, "the list's stream after another order was created")
		waitState(t, s, "other", "up")

		s.Do(t, "DELETE", "/api/v1/catalog-item-instances/watched", nil).Want(t, http.StatusAccepted)
		nextEvent(t, one, "the order's stream after it was deleted")
		if p := b.get("/ui/events?order=nope"); p.status != http.StatusNotFound {
			t.Errorf("a stream of an unknown order: %d, want 404", p.status)
		}
	})
}

func waitState(t *testing.T, s *apitest.Server, id, state string) {
	t.Helper()
	poll.Until(t, "order "+id+" is "+state, func() bool {
		var o struct {
			State string `json:"state"`
		}
		s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id, nil).Want(t, http.StatusOK).JSON(t, &o)
		return o.State == state
	})
}
