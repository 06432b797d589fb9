package events

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitTimeout bounds every wait on the bus in these tests.
const waitTimeout = 10 * time.Second

// testLogger sends logs to t.Log until the test ends. NATS callbacks may
// still fire after it, and t.Log would panic then, so late lines are dropped.
func testLogger(t testing.TB) *slog.Logger {
	t.Helper()
	w := &testWriter{t: t}
	t.Cleanup(func() { // registered first, so it runs last
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(p[:len(p)-1]))
	}
	return len(p), nil
}

var _ io.Writer = (*testWriter)(nil)

// startServer starts an embedded server on storeDir, stopped at cleanup.
func startServer(t testing.TB, cfg EmbeddedConfig) *EmbeddedServer {
	t.Helper()
	if cfg.StoreDir == "" {
		cfg.StoreDir = filepath.Join(t.TempDir(), "nats")
	}
	cfg.Logger = testLogger(t)
	srv := NewEmbeddedServer(cfg)
	if err := srv.Start(context.Background()); err != nil {
		t.Fatalf("start embedded server: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(context.Background()); err != nil {
			t.Errorf("stop embedded server: %v", err)
		}
	})
	return srv
}

// startBus starts a Bus on srv (unless cfg names a URL), stopped at cleanup.
func startBus(t testing.TB, srv *EmbeddedServer, cfg Config) *Bus {
	t.Helper()
	if cfg.URL == "" {
		cfg.Embedded = srv
	}
	cfg.Logger = testLogger(t)
	b := New(cfg)
	if err := b.Start(context.Background()); err != nil {
		t.Fatalf("start bus: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Stop(context.Background()); err != nil {
			t.Errorf("stop bus: %v", err)
		}
	})
	return b
}

// newEvent builds a valid event or fails the test.
func newEvent(t testing.TB, eventType string, data any) Event {
	t.Helper()
	ev, err := NewEvent("/steward/test", eventType, data)
	if err != nil {
		t.Fatalf("NewEvent: %v", err)
	}
	return ev
}

// collector is a Handler that passes events to a channel.
type collector struct{ ch chan Event }

func newCollector() *collector { return &collector{ch: make(chan Event, 100)} }

func (c *collector) handle(_ context.Context, ev Event) error {
	c.ch <- ev
	return nil
}

// subscribe subscribes h as durable on subject, stopped at cleanup.
func subscribe(t testing.TB, b *Bus, subject, durable string, h Handler) {
	t.Helper()
	stop, err := b.Subscribe(context.Background(), SubscribeParams{Subject: subject, Durable: durable, Handler: h})
	if err != nil {
		t.Fatalf("subscribe %s: %v", durable, err)
	}
	t.Cleanup(stop)
}

// receive waits for n events.
func (c *collector) receive(t testing.TB, n int) []Event {
	t.Helper()
	var got []Event
	deadline := time.After(waitTimeout)
	for len(got) < n {
		select {
		case ev := <-c.ch:
			got = append(got, ev)
		case <-deadline:
			t.Fatalf("received %d events within %s, want %d", len(got), waitTimeout, n)
		}
	}
	return got
}

// streamMsgs returns how many messages the stream holds.
func streamMsgs(t testing.TB, b *Bus) uint64 {
	t.Helper()
	_, js, err := b.conn()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	s, err := js.Stream(ctx, b.cfg.Stream)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	return info.State.Msgs
}

// waitAcked polls the durable consumer until n deliveries are acked, and
// returns its info; Delivered.Consumer then counts every delivery, so a
// redelivery or a duplicate would show.
func waitAcked(t testing.TB, b *Bus, durable string, n uint64) *jetstream.ConsumerInfo {
	t.Helper()
	_, js, err := b.conn()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for {
		c, err := js.Consumer(ctx, b.cfg.Stream, durable)
		if err != nil {
			t.Fatalf("consumer %s: %v", durable, err)
		}
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatalf("consumer info: %v", err)
		}
		if info.AckFloor.Consumer >= n && info.NumAckPending == 0 {
			return info
		}
		select {
		case <-ctx.Done():
			t.Fatalf("consumer %s: ack floor %d within %s, want %d", durable, info.AckFloor.Consumer, waitTimeout, n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
