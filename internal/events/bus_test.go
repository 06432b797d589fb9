package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestBus_PublishSubscribe_DeliversAStructuredCloudEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bus := startBus(t, startServer(t, EmbeddedConfig{}), Config{})
	c := newCollector()
	subscribe(t, bus, "steward.instance.>", "watcher", c.handle)

	ev := newEvent(t, "dev.steward.instance.created", map[string]string{"instance_id": "i-1"}).WithSubject("i-1")
	if err := bus.Publish(ctx, "steward.instance.created", ev); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	got := c.receive(t, 1)[0]
	if err := got.Validate(); err != nil {
		t.Errorf("received event is invalid: %v", err)
	}
	var data map[string]string
	if err := got.DataAs(&data); err != nil || data["instance_id"] != "i-1" {
		t.Errorf("data = %v (%v)", data, err)
	}
	if got.ID() != ev.ID() || got.Type() != ev.Type() || got.Subject() != "i-1" {
		t.Errorf("received %s, want %s", got, ev)
	}

	// On the wire: structured mode, and the event id as the dedupe id.
	_, js, _ := bus.conn()
	stream, err := js.Stream(ctx, bus.cfg.Stream)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := stream.GetLastMsgForSubject(ctx, "steward.instance.created")
	if err != nil {
		t.Fatal(err)
	}
	if h := raw.Header.Get("Content-Type"); h != ContentType {
		t.Errorf("Content-Type = %q, want %q", h, ContentType)
	}
	if h := raw.Header.Get(jetstream.MsgIDHeader); h != ev.ID() {
		t.Errorf("%s = %q, want the event id %q", jetstream.MsgIDHeader, h, ev.ID())
	}
}

func TestBus_PublishSameEventTwice_StoresItOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bus := startBus(t, startServer(t, EmbeddedConfig{}), Config{})
	ev := newEvent(t, "dev.steward.test", nil)
	for range 2 {
		if err := bus.Publish(ctx, "steward.test", ev); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	if n := streamMsgs(t, bus); n != 1 {
		t.Errorf("stream holds %d messages, want 1", n)
	}
}

func TestBus_HandlerError_RedeliversTheEvent(t *testing.T) {
	t.Parallel()
	bus := startBus(t, startServer(t, EmbeddedConfig{}), Config{RetryDelay: time.Millisecond})
	c := newCollector()
	var calls atomic.Int32
	subscribe(t, bus, "steward.>", "flaky", func(ctx context.Context, ev Event) error {
		if calls.Add(1) == 1 {
			return errors.New("first attempt fails")
		}
		return c.handle(ctx, ev)
	})
	ev := newEvent(t, "dev.steward.test", nil)
	if err := bus.Publish(context.Background(), "steward.test", ev); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got := c.receive(t, 1)[0]; got.ID() != ev.ID() {
		t.Errorf("redelivered %s, want %s", got, ev)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("handler called %d times, want 2", n)
	}
}

// A failed handler's event comes back after Backoff(delivered), asked with
// the delivery count.
func TestBus_HandlerError_RedeliversAfterTheBackoff(t *testing.T) {
	t.Parallel()
	bus := startBus(t, startServer(t, EmbeddedConfig{}), Config{RetryDelay: time.Hour})
	c := newCollector()
	var calls atomic.Int32
	var mu sync.Mutex
	var asked []uint64
	stop, err := bus.Subscribe(context.Background(), SubscribeParams{
		Subject: "steward.>", Durable: "backoff",
		Handler: func(ctx context.Context, ev Event) error {
			if calls.Add(1) <= 2 {
				return errors.New("not yet")
			}
			return c.handle(ctx, ev)
		},
		Backoff: func(delivered uint64) time.Duration {
			mu.Lock()
			asked = append(asked, delivered)
			mu.Unlock()
			return time.Duration(delivered) * time.Millisecond
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if err := bus.Publish(context.Background(), "steward.test", newEvent(t, "dev.steward.test", nil)); err != nil {
		t.Fatal(err)
	}
	c.receive(t, 1) // within waitTimeout: the Bus's hour-long RetryDelay was not used
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(asked) != "[1 2]" {
		t.Errorf("Backoff asked for deliveries %v, want [1 2]", asked)
	}
}

// Two subscribers share a durable; a handler that works longer than AckWait
// keeps its event (the subscription tells JetStream it is in progress), so
// the other subscriber never gets it at the same time.
func TestBus_LongHandlerKeepsItsEvent(t *testing.T) {
	t.Parallel()
	srv := startServer(t, EmbeddedConfig{})
	const ackWait = 300 * time.Millisecond
	var calls atomic.Int32
	done := make(chan struct{}, 2)
	work := func(ctx context.Context, _ Event) error {
		calls.Add(1)
		select { // the work itself takes three AckWaits
		case <-time.After(3 * ackWait):
		case <-ctx.Done():
			return ctx.Err()
		}
		done <- struct{}{}
		return nil
	}
	var buses []*Bus
	for range 2 {
		b := startBus(t, srv, Config{AckWait: ackWait, RetryDelay: time.Millisecond})
		stop, err := b.Subscribe(context.Background(), SubscribeParams{
			Subject: "steward.>", Durable: "replicas", Handler: work, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		buses = append(buses, b)
	}
	if err := buses[0].Publish(context.Background(), "steward.test", newEvent(t, "dev.steward.test", nil)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("the handler never finished")
	}
	info := waitAcked(t, buses[0], "replicas", 1)
	if n := calls.Load(); n != 1 || info.NumRedelivered != 0 {
		t.Errorf("handler ran %d times, %d redeliveries; want once, none", n, info.NumRedelivered)
	}
}

func TestBus_CheckFailsAfterTheServerStops(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := startServer(t, EmbeddedConfig{})
	bus := startBus(t, srv, Config{CheckTimeout: 200 * time.Millisecond})
	if err := bus.Check(ctx); err != nil {
		t.Fatalf("Check on a running server: %v", err)
	}
	if err := srv.Stop(ctx); err != nil {
		t.Fatalf("stop server: %v", err)
	}
	if err := bus.Check(ctx); err == nil {
		t.Error("Check after the server stopped = nil, want an error")
	}
}

func TestBus_BeforeStartAndAfterStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := startServer(t, EmbeddedConfig{})
	bus := New(Config{Embedded: srv, Logger: testLogger(t)})
	if err := bus.Stop(ctx); err != nil {
		t.Errorf("Stop before Start: %v", err)
	}
	ev := newEvent(t, "dev.steward.test", nil)
	check := func(when string) {
		t.Helper()
		if err := bus.Check(ctx); !errors.Is(err, ErrNotStarted) {
			t.Errorf("Check %s: err = %v, want ErrNotStarted", when, err)
		}
		if err := bus.Publish(ctx, "steward.test", ev); !errors.Is(err, ErrNotStarted) {
			t.Errorf("Publish %s: err = %v, want ErrNotStarted", when, err)
		}
		_, err := bus.Subscribe(ctx, SubscribeParams{Subject: "steward.>", Durable: "d", Handler: newCollector().handle})
		if !errors.Is(err, ErrNotStarted) {
			t.Errorf("Subscribe %s: err = %v, want ErrNotStarted", when, err)
		}
	}
	check("before Start")
	if err := bus.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := bus.Start(ctx); err != nil {
		t.Errorf("second Start: %v", err)
	}
	if _, err := bus.Subscribe(ctx, SubscribeParams{Subject: "steward.>", Durable: "d", Handler: newCollector().handle}); err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	for range 2 {
		if err := bus.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	check("after Stop")
}

func TestBus_PublishRejectsBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bus := startBus(t, startServer(t, EmbeddedConfig{}), Config{})
	if err := bus.Publish(ctx, "elsewhere.test", newEvent(t, "dev.steward.test", nil)); !errors.Is(err, ErrInvalidSubject) {
		t.Errorf("subject outside the stream: err = %v, want ErrInvalidSubject", err)
	}
	if err := bus.Publish(ctx, "steward.test", Event{}); !errors.Is(err, ErrInvalidEvent) {
		t.Errorf("zero event: err = %v, want ErrInvalidEvent", err)
	}
	if _, err := bus.Subscribe(ctx, SubscribeParams{Subject: "steward.>"}); err == nil {
		t.Error("Subscribe without durable or handler succeeded")
	}
}

func TestNew_PanicsWithoutExactlyOneTarget(t *testing.T) {
	t.Parallel()
	srv := NewEmbeddedServer(EmbeddedConfig{StoreDir: t.TempDir()})
	for name, cfg := range map[string]Config{
		"neither": {},
		"both":    {URL: "nats://127.0.0.1:4222", Embedded: srv},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New with %s of URL and Embedded did not panic", name)
				}
			}()
			New(cfg)
		}()
	}
}
