package live_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/events"
	"github.com/stewardhq/steward/internal/live"
)

// twoReplicas starts two Feeds on one embedded NATS server, as two
// replicas of Steward would be.
func twoReplicas(t *testing.T) (a, b *live.Feed) {
	t.Helper()
	ctx := context.Background()
	srv := events.NewEmbeddedServer(events.EmbeddedConfig{StoreDir: filepath.Join(t.TempDir(), "nats")})
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(ctx) })
	feeds := make([]*live.Feed, 2)
	for i := range feeds {
		bus := events.New(events.Config{Embedded: srv})
		if err := bus.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = bus.Stop(ctx) })
		feeds[i] = live.New(live.Config{Bus: bus, Interval: 20 * time.Millisecond})
		if err := feeds[i].Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(feeds[i].Stop)
	}
	return feeds[0], feeds[1]
}

func received(t *testing.T, w *live.Watcher, what string) {
	t.Helper()
	select {
	case <-w.Changes():
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no change heard within 10s", what)
	}
}

func TestFeed_AChangeOnOneReplicaReachesTheOthersWatchers(t *testing.T) {
	a, b := twoReplicas(t)
	all, x, y := b.Watch(""), b.Watch("order-x"), b.Watch("order-y")
	defer all.Close()
	defer x.Close()
	defer y.Close()

	a.Changed("order-x")
	received(t, all, "the watcher of every order")
	received(t, x, "the watcher of order-x")
	// One notice reaches every watcher in one go: y's turn is past.
	select {
	case <-y.Changes():
		t.Fatal("the watcher of order-y was told of order-x's change")
	default:
	}

	b.Changed("order-y") // its own replica hears it too
	received(t, y, "the watcher of order-y")
}

func TestFeed_ABurstIsOneNoticeAndTooManyIdsReachEveryWatcher(t *testing.T) {
	a, b := twoReplicas(t)
	y := b.Watch("order-y")
	defer y.Close()
	// A burst of 600 is gathered into one notice unless an interval ends
	// within it; bursts are sent until one went as one.
	deadline := time.Now().Add(10 * time.Second)
	for burst := 0; ; burst++ {
		for i := range 600 {
			a.Changed(fmt.Sprintf("order-%d-%d", burst, i))
		}
		select {
		case <-y.Changes():
			return
		case <-time.After(time.Second):
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher of order-y was never told of a notice too large to name its order")
		}
	}
}

func TestFeed_AClosedWatcherIsToldNothing(t *testing.T) {
	a, _ := twoReplicas(t)
	closed, open := a.Watch(""), a.Watch("")
	closed.Close()
	closed.Close() // idempotent
	defer open.Close()
	a.Changed("order-x")
	received(t, open, "the open watcher")
	select {
	case <-closed.Changes():
		t.Fatal("a closed watcher was told of a change")
	default:
	}
}

func TestFeed_APageWatchedFromAnEarlierSeqHearsWhatItMissed(t *testing.T) {
	a, b := twoReplicas(t)
	seen := b.Seq()
	all := b.Watch("")
	defer all.Close()
	a.Changed("order-x")
	received(t, all, "the watcher of every order")

	late := b.WatchSince("order-y", seen) // a page rendered before the notice
	defer late.Close()
	received(t, late, "a watcher from before the notice")
	current := b.WatchSince("order-y", b.Seq())
	defer current.Close()
	select {
	case <-current.Changes():
		t.Fatal("a watcher from the current seq was told of a change it did not miss")
	default:
	}
}
