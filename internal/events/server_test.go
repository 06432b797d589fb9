package events

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

func TestEmbeddedServer_StopIsIdempotentAndSafeBeforeStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := NewEmbeddedServer(EmbeddedConfig{StoreDir: t.TempDir(), Logger: testLogger(t)})
	if err := srv.Stop(ctx); err != nil {
		t.Errorf("Stop before Start: %v", err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := srv.Start(ctx); !errors.Is(err, ErrAlreadyStarted) {
		t.Errorf("second Start: err = %v, want ErrAlreadyStarted", err)
	}
	for i := range 2 {
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("Stop #%d: %v", i+1, err)
		}
	}
	if _, err := srv.InProcessConn(); !errors.Is(err, ErrNotStarted) {
		t.Errorf("InProcessConn after Stop: err = %v, want ErrNotStarted", err)
	}
}

func TestEmbeddedServer_ListensOnLoopbackOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	quiet := startServer(t, EmbeddedConfig{})
	if u := quiet.ClientURL(); u != "" {
		t.Errorf("ClientURL without Listen = %q, want none", u)
	}

	srv := startServer(t, EmbeddedConfig{Listen: true})
	url := srv.ClientURL()
	if !strings.HasPrefix(url, "nats://127.0.0.1:") || strings.HasSuffix(url, ":-1") {
		t.Fatalf("ClientURL = %q, want nats://127.0.0.1:<port>", url)
	}
	// An external client (as the nats CLI would) reaches the same stream.
	bus := startBus(t, nil, Config{URL: url})
	c := newCollector()
	subscribe(t, bus, "steward.>", "tcp", c.handle)
	ev := newEvent(t, "dev.steward.test", map[string]string{"via": "tcp"})
	if err := bus.Publish(context.Background(), "steward.test.tcp", ev); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got := c.receive(t, 1)[0]; got.ID() != ev.ID() {
		t.Errorf("received %s, want %s", got, ev)
	}
}

// Issue 28: with a token, every client must give it: a TCP client without
// it is refused, one with it (nats://TOKEN@host:port) and Steward's own
// in-process bus get through. Without a token the server refuses to listen
// beyond the host.
func TestEmbeddedServer_TokenIsRequiredOfEveryClient(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	srv := startServer(t, EmbeddedConfig{Listen: true, Token: token})
	url := srv.ClientURL()
	if strings.Contains(url, token) {
		t.Fatalf("ClientURL %q shows the token", url)
	}
	if nc, err := nats.Connect(url, nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatalf("a client without the token connected")
	} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("a client without the token: %v, want an authorization error", err)
	}
	withToken := startBus(t, nil, Config{URL: strings.Replace(url, "nats://", "nats://"+token+"@", 1)})
	inProcess := startBus(t, srv, Config{})
	c := newCollector()
	subscribe(t, withToken, "steward.>", "token", c.handle)
	ev := newEvent(t, "dev.steward.test", map[string]string{"via": "in-process"})
	if err := inProcess.Publish(context.Background(), "steward.test.token", ev); err != nil {
		t.Fatalf("Publish in process: %v", err)
	}
	if got := c.receive(t, 1)[0]; got.ID() != ev.ID() {
		t.Errorf("received %s, want %s", got, ev)
	}

	open := NewEmbeddedServer(EmbeddedConfig{StoreDir: t.TempDir(), Listen: true, Host: "0.0.0.0", Logger: testLogger(t)})
	if err := open.Start(context.Background()); err == nil {
		_ = open.Stop(context.Background())
		t.Fatal("a server listening beyond the host without a token started")
	}
}

// The durable consumer's position is stored with the stream: after a restart
// it gets what it has not acked, and nothing it has.
func TestEmbeddedServer_DurableConsumerSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "nats")

	first := NewEmbeddedServer(EmbeddedConfig{StoreDir: dir, Logger: testLogger(t)})
	if err := first.Start(ctx); err != nil {
		t.Fatalf("start first server: %v", err)
	}
	bus := New(Config{Embedded: first, Logger: testLogger(t)})
	if err := bus.Start(ctx); err != nil {
		t.Fatalf("start bus: %v", err)
	}
	c := newCollector()
	stop, err := bus.Subscribe(ctx, SubscribeParams{Subject: "steward.>", Durable: "keeper", Handler: c.handle})
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	acked := newEvent(t, "dev.steward.test", map[string]int{"n": 1})
	if err := bus.Publish(ctx, "steward.test.one", acked); err != nil {
		t.Fatalf("publish: %v", err)
	}
	c.receive(t, 1)
	waitAcked(t, bus, "keeper", 1)
	stop()
	pending := newEvent(t, "dev.steward.test", map[string]int{"n": 2})
	if err := bus.Publish(ctx, "steward.test.two", pending); err != nil {
		t.Fatalf("publish: %v", err)
	}
	if err := bus.Stop(ctx); err != nil {
		t.Fatalf("stop bus: %v", err)
	}
	if err := first.Stop(ctx); err != nil {
		t.Fatalf("stop first server: %v", err)
	}

	second := startServer(t, EmbeddedConfig{StoreDir: dir})
	bus = startBus(t, second, Config{})
	if n := streamMsgs(t, bus); n != 2 {
		t.Errorf("stream holds %d messages after restart, want 2", n)
	}
	c = newCollector()
	subscribe(t, bus, "steward.>", "keeper", c.handle)
	if got := c.receive(t, 1)[0]; got.ID() != pending.ID() {
		t.Errorf("after restart received %s, want only the unacked %s", got, pending)
	}
	info := waitAcked(t, bus, "keeper", 2)
	if info.Delivered.Stream != 2 {
		t.Errorf("consumer delivered up to stream seq %d, want 2", info.Delivered.Stream)
	}
}

// BenchmarkEmbeddedServer_Start measures a cold start on an empty store dir,
// which Steward pays at every boot (the target is well under 100ms).
func BenchmarkEmbeddedServer_Start(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		srv := NewEmbeddedServer(EmbeddedConfig{StoreDir: b.TempDir()})
		if err := srv.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := srv.Stop(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
