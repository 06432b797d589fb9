package events

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// relaySetup is one test's database, bus and relay (not started).
type relaySetup struct {
	db    *store.DB
	bus   *Bus
	relay *Relay
}

func setupRelay(t *testing.T, engine store.Engine) relaySetup {
	t.Helper()
	db := storetest.Open(t, engine)
	bus := startBus(t, startServer(t, EmbeddedConfig{}), Config{})
	relay := NewRelay(RelayConfig{DB: db, Bus: bus, Logger: testLogger(t)})
	return relaySetup{db: db, bus: bus, relay: relay}
}

// publishTx commits events in one transaction, failing the test on error.
func (s relaySetup) publishTx(t *testing.T, subject string, evs ...Event) {
	t.Helper()
	err := s.db.InTx(context.Background(), func(tx *store.Tx) error {
		for _, ev := range evs {
			if err := PublishTx(context.Background(), tx, subject, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("commit events: %v", err)
	}
}

func (s relaySetup) outboxLen(t *testing.T) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(context.Background(), `SELECT COUNT(*) FROM event_outbox`).Scan(&n); err != nil {
		t.Fatalf("count outbox: %v", err)
	}
	return n
}

func TestPublishTx_RolledBackTransactionPublishesNothing(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		s := setupRelay(t, engine)
		boom := errors.New("boom")
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			if err := PublishTx(ctx, tx, "steward.test", newEvent(t, "dev.steward.test", nil)); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx: err = %v, want boom", err)
		}
		if n, err := s.relay.runOnce(ctx); n != 0 || err != nil {
			t.Errorf("runOnce = %d, %v; want nothing to publish", n, err)
		}
		if n := streamMsgs(t, s.bus); n != 0 {
			t.Errorf("stream holds %d messages, want 0", n)
		}
	})
}

func TestPublishTx_RejectsBadInputInsideTheTransaction(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine)
		_ = db.InTx(ctx, func(tx *store.Tx) error {
			if err := PublishTx(ctx, tx, "steward.>", newEvent(t, "dev.steward.test", nil)); !errors.Is(err, ErrInvalidSubject) {
				t.Errorf("wildcard subject: err = %v, want ErrInvalidSubject", err)
			}
			if err := PublishTx(ctx, tx, "steward.test", Event{}); !errors.Is(err, ErrInvalidEvent) {
				t.Errorf("zero event: err = %v, want ErrInvalidEvent", err)
			}
			return nil
		})
	})
}

func TestRelay_DeliversCommittedEventsExactlyOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		s := setupRelay(t, engine)
		c := newCollector()
		subscribe(t, s.bus, "steward.>", "outbox", c.handle)
		first := newEvent(t, "dev.steward.test", map[string]int{"n": 1}).WithSubject("i-1")
		second := newEvent(t, "dev.steward.test", map[string]int{"n": 2})
		s.publishTx(t, "steward.test.a", first, second)

		if n, err := s.relay.runOnce(ctx); n != 2 || err != nil {
			t.Fatalf("runOnce = %d, %v; want 2 published", n, err)
		}
		got := c.receive(t, 2)
		if got[0].ID() != first.ID() || got[1].ID() != second.ID() {
			t.Errorf("received %v, want [%s %s] in order", got, first, second)
		}
		var data map[string]int
		if err := got[0].DataAs(&data); err != nil || data["n"] != 1 || got[0].Subject() != "i-1" {
			t.Errorf("first event data = %v (%v), subject %q", data, err, got[0].Subject())
		}
		if n := s.outboxLen(t); n != 0 {
			t.Errorf("outbox holds %d rows after the pass, want 0", n)
		}

		// A second relay (another replica, or this one after a crash before
		// its delete) publishes the same row again: JetStream drops it.
		s.publishTx(t, "steward.test.a", first)
		if n, err := s.relay.runOnce(ctx); n != 1 || err != nil {
			t.Fatalf("second runOnce = %d, %v; want 1 published", n, err)
		}
		if n := streamMsgs(t, s.bus); n != 2 {
			t.Errorf("stream holds %d messages, want 2 (the duplicate dropped)", n)
		}
		if info := waitAcked(t, s.bus, "outbox", 2); info.Delivered.Consumer != 2 {
			t.Errorf("consumer made %d deliveries, want 2", info.Delivered.Consumer)
		}
		if n := s.outboxLen(t); n != 0 {
			t.Errorf("outbox holds %d rows, want 0", n)
		}
	})
}

// PublishManyTx writes a batch in chunks (267 = 256 + 8 + 2 + 1 rows); the
// relay publishes it in the batch's order, each event on its own subject,
// with its data intact.
func TestPublishManyTx_RelaysTheBatchInOrder(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		s := setupRelay(t, engine)
		c := newCollector()
		subscribe(t, s.bus, "steward.>", "many", c.handle)
		var msgs []Message
		for i := range 267 {
			subject := "steward.test.a"
			if i%2 == 1 {
				subject = "steward.test.b"
			}
			msgs = append(msgs, Message{Subject: subject, Event: newEvent(t, "dev.steward.test", map[string]int{"n": i})})
		}
		err := s.db.InTx(ctx, func(tx *store.Tx) error { return PublishManyTx(ctx, tx, msgs) })
		if err != nil {
			t.Fatal(err)
		}
		published := 0
		for published < len(msgs) {
			n, err := s.relay.runOnce(ctx)
			if n == 0 || err != nil {
				t.Fatalf("runOnce = %d, %v after %d published; want %d", n, err, published, len(msgs))
			}
			published += n
		}
		for i, ev := range c.receive(t, len(msgs)) {
			var data map[string]int
			if err := ev.DataAs(&data); err != nil || ev.ID() != msgs[i].Event.ID() || data["n"] != i {
				t.Errorf("event %d = %s (data %v, %v), want %s", i, ev, data, err, msgs[i].Event)
			}
		}

		bad := []Message{{Subject: "steward.ok", Event: newEvent(t, "dev.steward.test", nil)}, {Subject: "other.x", Event: newEvent(t, "dev.steward.test", nil)}}
		err = s.db.InTx(ctx, func(tx *store.Tx) error { return PublishManyTx(ctx, tx, bad) })
		if !errors.Is(err, ErrInvalidSubject) || s.outboxLen(t) != 0 {
			t.Errorf("a batch with a bad subject = %v with %d rows written, want ErrInvalidSubject and none", err, s.outboxLen(t))
		}
	})
}

// failingPublisher fails every publish after the first ok ones.
type failingPublisher struct {
	inner publisher
	ok    int
}

func (f *failingPublisher) publishRaw(ctx context.Context, subject, id string, data []byte) (bool, error) {
	if f.ok == 0 {
		return false, errors.New("nats is down")
	}
	f.ok--
	return f.inner.publishRaw(ctx, subject, id, data)
}

func TestRelay_KeepsWhatItCouldNotPublish(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		s := setupRelay(t, engine)
		evs := []Event{newEvent(t, "dev.steward.test", nil), newEvent(t, "dev.steward.test", nil), newEvent(t, "dev.steward.test", nil)}
		s.publishTx(t, "steward.test", evs...)
		s.relay.pub = &failingPublisher{inner: s.bus, ok: 1}

		if n, err := s.relay.runOnce(ctx); n != 1 || err == nil {
			t.Fatalf("runOnce = %d, %v; want 1 published then an error", n, err)
		}
		if n := s.outboxLen(t); n != 2 {
			t.Errorf("outbox holds %d rows, want the 2 unpublished", n)
		}
		s.relay.pub = s.bus
		if n, err := s.relay.runOnce(ctx); n != 2 || err != nil {
			t.Errorf("retry runOnce = %d, %v; want the other 2", n, err)
		}
		if n := streamMsgs(t, s.bus); n != 3 {
			t.Errorf("stream holds %d messages, want 3", n)
		}
	})
}

func TestRelay_NotifyTriggersAPassAndStopWaits(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		s := setupRelay(t, engine)
		// A poll interval no test would wait for: only Notify can deliver.
		s.relay = NewRelay(RelayConfig{DB: s.db, Bus: s.bus, Logger: testLogger(t), PollInterval: time.Hour})
		if err := s.relay.Stop(ctx); err != nil {
			t.Errorf("Stop before Start: %v", err)
		}
		c := newCollector()
		subscribe(t, s.bus, "steward.>", "notified", c.handle)
		if err := s.relay.Start(ctx); err != nil {
			t.Fatalf("Start: %v", err)
		}
		t.Cleanup(func() { _ = s.relay.Stop(context.Background()) })

		for i := range 3 {
			ev := newEvent(t, "dev.steward.test", map[string]int{"n": i})
			s.publishTx(t, "steward.test", ev)
			s.relay.Notify()
			if got := c.receive(t, 1)[0]; got.ID() != ev.ID() {
				t.Errorf("received %s, want %s", got, ev)
			}
		}
		for range 2 {
			if err := s.relay.Stop(ctx); err != nil {
				t.Errorf("Stop: %v", err)
			}
		}
	})
}

// countingPublisher counts the publishes of each event id. Its first
// publishes wait (a bounded while) until every relay is publishing, so the
// relays' batches overlap in time as they do on a busy cluster.
type countingPublisher struct {
	inner   publisher
	relays  int
	mu      sync.Mutex
	calls   map[string]int
	entered int
	all     chan struct{}
}

func (c *countingPublisher) publishRaw(ctx context.Context, subject, id string, data []byte) (bool, error) {
	c.mu.Lock()
	c.calls[id]++
	c.entered++
	if c.entered == c.relays {
		close(c.all)
	}
	c.mu.Unlock()
	select {
	case <-c.all:
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
	}
	return c.inner.publishRaw(ctx, subject, id, data)
}

// Issue 28: the relays of three replicas share one PostgreSQL outbox. Each
// must publish a batch no other is publishing: on a NATS cluster, a second
// publish of an id still in flight is refused (409 "duplicate message id is
// in process") and stops that relay's pass.
func TestRelay_ReplicasNeverPublishOneRowAtOnce(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	bus := startBus(t, startServer(t, EmbeddedConfig{}), Config{})
	s := relaySetup{db: db, bus: bus}
	const events = 600
	for range events / 100 {
		evs := make([]Event, 100)
		for i := range evs {
			evs[i] = newEvent(t, "dev.steward.test", nil)
		}
		s.publishTx(t, "steward.test", evs...)
	}
	counter := &countingPublisher{inner: bus, relays: 3, calls: map[string]int{}, all: make(chan struct{})}
	var wg sync.WaitGroup
	for range 3 {
		relay := NewRelay(RelayConfig{DB: db, Bus: bus, Logger: testLogger(t), BatchSize: 20})
		relay.pub = counter
		wg.Go(func() {
			for s.outboxLen(t) > 0 {
				if _, err := relay.runOnce(context.Background()); err != nil {
					t.Errorf("runOnce: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := streamMsgs(t, bus); n != events {
		t.Errorf("stream holds %d messages, want %d", n, events)
	}
	twice := 0
	for _, n := range counter.calls {
		if n > 1 {
			twice++
		}
	}
	if len(counter.calls) != events || twice > 0 {
		t.Errorf("the relays published %d ids, %d of them more than once; want each of the %d once", len(counter.calls), twice, events)
	}
}
