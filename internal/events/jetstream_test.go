package events

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Issue 46: a nats-server started without -js, given as --nats-url, stops
// the start with an error saying JetStream must be enabled on it, not
// with NATS's "no responders available for request".
func TestBus_StartOnAServerWithoutJetStreamSaysToEnableIt(t *testing.T) {
	t.Parallel()
	srv := startNATS(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bus := New(Config{URL: srv.ClientURL(), Logger: testLogger(t)})
	err := bus.Start(ctx)
	want := "events: the NATS server at " + srv.ClientURL() + " has no JetStream: start it with -js (nats-server -js)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Start on a server without JetStream = %v, want an error saying %q", err, want)
	}
	if _, _, cerr := bus.conn(); cerr == nil {
		t.Error("the bus is started after the failed Start")
	}
}
