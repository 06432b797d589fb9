package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/stewardhq/steward/internal/live"
)

// Changes tells the console which orders changed (live.Feed).
type Changes interface {
	Seq() uint64
	WatchSince(orderID string, seq uint64) *live.Watcher
}

// keepAliveEvery is how often an idle stream sends a comment, so that
// proxies keep it open and a dead browser is noticed.
const keepAliveEvery = 25 * time.Second

// events streams, as Server-Sent Events, a "changed" event whenever the
// orders a page shows change: every order (?order= empty), or one. The page's
// script then fetches the page again, as the signed-in user: the stream
// itself carries no data, so it shows nothing the user may not read.
func (c *Console) events(w http.ResponseWriter, r *http.Request, s *session) error {
	if c.changes == nil {
		return &apiError{Status: http.StatusNotFound, Reason: "NOT_FOUND", Detail: "live updates are off on this server"}
	}
	// The caller must be able to read what it watches: one order, or the
	// orders list, which every signed-in caller may list (asking who it is
	// costs no read of the orders).
	id := trimmed(r, "order")
	check := "/api/v1/whoami"
	if id != "" {
		check = "/api/v1/catalog-item-instances/" + url.PathEscape(id)
	}
	if err := c.call(r, s, http.MethodGet, check, nil, nil); err != nil {
		return err
	}
	// seq is the feed's count when the page was made: a change since then
	// is sent at once.
	seq, err := strconv.ParseUint(r.FormValue("seq"), 10, 64)
	if err != nil {
		seq = c.changes.Seq()
	}
	watcher := c.changes.WatchSince(id, seq)
	defer watcher.Close()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no") // no proxy buffering of a stream
	rc := http.NewResponseController(w)
	send := func(msg string) error {
		// Each write gets its own deadline: the server's WriteTimeout would
		// otherwise end every stream after a minute.
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprint(w, msg); err != nil {
			return err
		}
		return rc.Flush()
	}
	// retry: how long the browser waits before it reconnects.
	if err := send("retry: 3000\n\n"); err != nil {
		return nil
	}
	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	for {
		var msg string
		select {
		case <-r.Context().Done():
			return nil
		case <-c.closing:
			return nil
		case <-keepAlive.C:
			msg = ": keep-alive\n\n"
		case <-watcher.Changes():
			msg = "event: changed\ndata: {}\n\n"
		}
		if err := send(msg); err != nil {
			return nil // the browser went away
		}
	}
}

// liveURL is the stream a page showing order id ("" for every order)
// listens to; call it before reading what the page shows.
func (c *Console) liveURL(s *session, id string) string {
	if c.changes == nil {
		return ""
	}
	return query("/ui/events", map[string]string{"order": id, "project": s.project,
		"seq": strconv.FormatUint(c.changes.Seq(), 10)})
}

// Close ends every live stream (the server is shutting down; browsers
// reconnect to another replica, or to this one when it is back). It is
// idempotent.
func (c *Console) Close() {
	c.closeOnce.Do(func() { close(c.closing) })
}
