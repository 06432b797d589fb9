package events

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/stewardhq/steward/internal/poll"
)

// Issue 28: on a three-node NATS cluster a Bus with Replicas 3 keeps its
// stream on all three. When the node leading the stream goes away, the Bus
// reconnects to another, publishes go on, and a durable subscriber gets
// every event, the ones from before the loss included, once.
func TestBus_R3StreamSurvivesLosingTheLeadingNode(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	bus := startR3Bus(t, clusterURL(nodes))

	c := newCollector()
	subscribe(t, bus, "steward.>", "r3", c.handle)
	first := newEvent(t, "dev.steward.test", map[string]int{"n": 1})
	if err := bus.Publish(context.Background(), "steward.test.r3", first); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got := c.receive(t, 1)[0]; got.ID() != first.ID() {
		t.Fatalf("received %s, want %s", got, first)
	}

	info := streamInfo(t, bus)
	if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream config replicas %d, cluster %+v; want 3 (a leader and 2 replicas)", info.Config.Replicas, info.Cluster)
	}
	leader := info.Cluster.Leader
	for _, n := range nodes {
		if n.Name() == leader {
			n.Shutdown()
			n.WaitForShutdown()
		}
	}

	second := newEvent(t, "dev.steward.test", map[string]int{"n": 2})
	poll.UntilWithin(t, 30*time.Second, "a publish once the stream's leader is gone", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return bus.Publish(ctx, "steward.test.r3", second) == nil
	})
	if got := c.receive(t, 1)[0]; got.ID() != second.ID() {
		t.Fatalf("after the leader's loss received %s, want %s", got, second)
	}
	if after := streamInfo(t, bus); after.Cluster == nil || after.Cluster.Leader == leader || after.State.Msgs != 2 {
		t.Errorf("after the loss: leader %v (was %s), %d messages; want another leader and both messages", after.Cluster, leader, after.State.Msgs)
	}
	select {
	case ev := <-c.ch:
		t.Errorf("an event came twice: %s", ev)
	case <-time.After(200 * time.Millisecond):
	}
}

func streamInfo(t *testing.T, b *Bus) *jetstream.StreamInfo {
	t.Helper()
	var info *jetstream.StreamInfo
	poll.UntilWithin(t, 30*time.Second, "the stream's info", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := b.js.Stream(ctx, b.cfg.Stream)
		if err != nil {
			return false
		}
		info, err = s.Info(ctx)
		return err == nil
	})
	return info
}

// startCluster starts n in-process NATS servers with JetStream, routed to
// each other on 127.0.0.1, shut down at cleanup.
func startCluster(t *testing.T, n int) []*server.Server {
	t.Helper()
	ports := make([]int, n)
	var routes []string
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	dir := t.TempDir()
	var nodes []*server.Server
	for i := range n {
		opts := &server.Options{
			ServerName: fmt.Sprintf("node-%d", i+1), Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true,
			JetStream: true, StoreDir: filepath.Join(dir, fmt.Sprint(i)),
			Cluster: server.ClusterOpts{Name: "steward-test", Host: "127.0.0.1", Port: ports[i]},
			Routes:  server.RoutesFromStr(strings.Join(routes, ",")),
		}
		nodes = append(nodes, startNATS(t, opts))
	}
	return nodes
}

// startNATS starts an in-process NATS server with opts, ready for
// connections and shut down at cleanup.
func startNATS(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	})
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatalf("nats server %s not ready", opts.ServerName)
	}
	return srv
}

// clusterURL is the client URL list of nodes, as nats.Connect takes it.
func clusterURL(nodes []*server.Server) string {
	var urls []string
	for _, n := range nodes {
		urls = append(urls, n.ClientURL())
	}
	return strings.Join(urls, ",")
}

// startR3Bus starts a Bus keeping its stream on three nodes of the cluster
// at url, once the cluster can take it; it is stopped at cleanup.
func startR3Bus(t *testing.T, url string) *Bus {
	t.Helper()
	var bus *Bus
	poll.UntilWithin(t, 30*time.Second, "the cluster takes the R3 stream", func() bool {
		b := New(Config{URL: url, Replicas: 3, Logger: testLogger(t)})
		if err := b.Start(context.Background()); err != nil {
			return false
		}
		bus = b
		return true
	})
	t.Cleanup(func() { _ = bus.Stop(context.Background()) })
	return bus
}

// Issue 28: six replicas starting together (a Deployment's first rollout) each
// create the R3 stream and the shared durable consumer at once. NATS
// answers only one of such concurrent creates; every Bus must still start
// and subscribe, not fail on the silence.
func TestBus_ReplicasStartingTogetherAllGetTheR3Stream(t *testing.T) {
	t.Parallel()
	url := clusterURL(startCluster(t, 3))
	poll.UntilWithin(t, 30*time.Second, "the cluster elects a JetStream leader", func() bool {
		nc, err := nats.Connect(url)
		if err != nil {
			return false
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = js.AccountInfo(ctx)
		return err == nil
	})
	const replicas = 6
	errs := make(chan error, replicas)
	for i := range replicas {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			b := New(Config{URL: url, Replicas: 3, Logger: testLogger(t)})
			if err := b.Start(ctx); err != nil {
				errs <- fmt.Errorf("bus %d: start: %w", i, err)
				return
			}
			t.Cleanup(func() { _ = b.Stop(context.Background()) })
			stop, err := b.Subscribe(ctx, SubscribeParams{Subject: "steward.>", Durable: "together",
				Handler: func(context.Context, Event) error { return nil }})
			if err != nil {
				errs <- fmt.Errorf("bus %d: subscribe: %w", i, err)
				return
			}
			t.Cleanup(stop)
			errs <- nil
		}()
	}
	for range replicas {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// Issue 28: an adapter (or `steward sentinel`) connects with the events
// defaults, one copy, to the stream the servers keep on three. Its start
// must not take the stream's copies away.
func TestBus_AClientWithDefaultsKeepsTheStreamsCopies(t *testing.T) {
	t.Parallel()
	url := clusterURL(startCluster(t, 3))
	owner := startR3Bus(t, url)
	client := New(Config{URL: url, Logger: testLogger(t)})
	if err := client.Start(context.Background()); err != nil {
		t.Fatalf("a client's start: %v", err)
	}
	t.Cleanup(func() { _ = client.Stop(context.Background()) })
	if info := streamInfo(t, owner); info.Config.Replicas != 3 {
		t.Errorf("after a client with the defaults started, the stream keeps %d copies, want 3", info.Config.Replicas)
	}
}
