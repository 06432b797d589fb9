package events

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
)

// keyed is a test event's data: its key and its place among its key's events.
type keyed struct {
	K string `json:"k"`
	N int    `json:"n"`
}

// With Workers, events of different keys are handled at once, and each
// key's events one at a time, in the order published (issue 28: one
// adapter handled 8 events a second, each waiting on the network).
func TestSubscribe_WorkersHandleKeysAtOnceAndEachKeyInOrder(t *testing.T) {
	t.Parallel()
	bus := startBus(t, startServer(t, EmbeddedConfig{}), Config{})
	var (
		mu       sync.Mutex
		inFlight = map[string]int{}
		running  int
		most     int
		overlap  []string
		seen     = map[string][]int{}
		both     = make(chan struct{})
		bothOnce sync.Once
	)
	handler := func(ctx context.Context, ev Event) error {
		var d keyed
		if err := ev.DataAs(&d); err != nil {
			return err
		}
		mu.Lock()
		inFlight[d.K]++
		running++
		most = max(most, running)
		if inFlight[d.K] > 1 {
			overlap = append(overlap, fmt.Sprintf("%s#%d", d.K, d.N))
		}
		if running > 1 {
			bothOnce.Do(func() { close(both) })
		}
		mu.Unlock()
		// The first events wait (a bounded while) for another handler to
		// run beside them: with one worker none ever does.
		select {
		case <-both:
		case <-time.After(2 * time.Second):
		case <-ctx.Done():
		}
		mu.Lock()
		inFlight[d.K]--
		running--
		seen[d.K] = append(seen[d.K], d.N)
		mu.Unlock()
		return nil
	}
	stop, err := bus.Subscribe(context.Background(), SubscribeParams{Subject: "steward.test.keyed", Durable: "keyed",
		Handler: handler, Workers: 4, Key: func(ev Event) string {
			var d keyed
			_ = ev.DataAs(&d)
			return d.K
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	const perKey = 10
	keys := []string{"a", "b", "c", "d", "e", "f"}
	for n := range perKey {
		for _, k := range keys {
			if err := bus.Publish(context.Background(), "steward.test.keyed", newEvent(t, "dev.steward.test", keyed{K: k, N: n})); err != nil {
				t.Fatal(err)
			}
		}
	}
	poll.UntilWithin(t, 30*time.Second, "every event handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		total := 0
		for _, ns := range seen {
			total += len(ns)
		}
		return total == perKey*len(keys)
	})
	mu.Lock()
	defer mu.Unlock()
	if most < 2 {
		t.Errorf("at most %d handler ran at once; want events of different keys handled at once", most)
	}
	if len(overlap) > 0 {
		t.Errorf("events of one key were handled at once: %v", overlap)
	}
	for _, k := range keys {
		for i, n := range seen[k] {
			if n != i {
				t.Errorf("key %s handled in the order %v, want 0..%d", k, seen[k], perKey-1)
				break
			}
		}
	}
}
