package events

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Config configures a [Bus]. Set exactly one of URL and Embedded.
type Config struct {
	// Logger receives connection changes and handler failures. Defaults to
	// discarding them.
	Logger *slog.Logger
	// URL is an external NATS server or cluster (nats://host:4222, several
	// separated by commas).
	URL string
	// Embedded is the in-process server to connect to, without a socket. It
	// must be started before [Bus.Start].
	Embedded *EmbeddedServer
	// Stream is the JetStream stream holding every "steward.>" subject.
	// Defaults to "STEWARD".
	Stream string
	// DuplicateWindow is how long JetStream remembers a message id to drop
	// a second publish of the same event (two relays, or a relay retrying
	// after a lost ack). Defaults to 2m.
	DuplicateWindow time.Duration
	// MaxAge is how long the stream keeps an event. Defaults to 7 days.
	MaxAge time.Duration
	// PublishTimeout bounds one publish, until JetStream's ack. Defaults to 5s.
	PublishTimeout time.Duration
	// Replicas is how many servers of a NATS cluster keep the stream (and
	// its durable consumers): 3 survives losing one. 0 keeps what the
	// stream has, and creates it with 1, the only value a single server
	// takes: the clients of Steward's stream (adapters, `steward sentinel`)
	// leave it 0, so their start never takes copies away from the stream
	// the servers keep.
	Replicas int
	// CheckTimeout bounds [Bus.Check]. Defaults to 2s.
	CheckTimeout time.Duration
	// AckWait is how long a subscriber's handler may run before JetStream
	// redelivers the event; the handler's ctx ends then. Defaults to 30s.
	AckWait time.Duration
	// RetryDelay is how long JetStream waits before redelivering an event
	// whose handler failed. Defaults to 5s.
	RetryDelay time.Duration
}

// Bus publishes events to JetStream and subscribes durable handlers to
// them. Build it with [New]; it is safe for concurrent use.
type Bus struct {
	cfg    Config
	logger *slog.Logger

	mu   sync.Mutex
	nc   *nats.Conn
	js   jetstream.JetStream
	subs map[*subscription]struct{}
}

// New returns a Bus that is not connected yet. It panics unless exactly one
// of cfg.URL and cfg.Embedded is set, a programmer's mistake.
func New(cfg Config) *Bus {
	if (cfg.URL == "") == (cfg.Embedded == nil) {
		panic("events: Config needs exactly one of URL and Embedded")
	}
	cfg.Stream = cmp.Or(cfg.Stream, "STEWARD")
	cfg.DuplicateWindow = cmp.Or(cfg.DuplicateWindow, 2*time.Minute)
	cfg.MaxAge = cmp.Or(cfg.MaxAge, 7*24*time.Hour)
	cfg.PublishTimeout = cmp.Or(cfg.PublishTimeout, 5*time.Second)
	cfg.CheckTimeout = cmp.Or(cfg.CheckTimeout, 2*time.Second)
	cfg.Replicas = max(cfg.Replicas, 0)
	cfg.AckWait = cmp.Or(cfg.AckWait, 30*time.Second)
	cfg.RetryDelay = cmp.Or(cfg.RetryDelay, 5*time.Second)
	logger := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "events.bus")
	return &Bus{cfg: cfg, logger: logger, subs: map[*subscription]struct{}{}}
}

// Start connects and makes sure the stream exists with the configured
// settings (file storage, duplicate window, max age); several replicas may
// do so at once. It is a no-op when the Bus is already started.
func (b *Bus) Start(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nc != nil {
		return nil
	}
	nc, err := b.connect()
	if err != nil {
		return err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return fmt.Errorf("events: jetstream: %w", err)
	}
	err = b.provision(ctx, "stream "+b.cfg.Stream, func(ctx context.Context) error {
		replicas, err := b.streamReplicas(ctx, js)
		if err != nil {
			return err
		}
		_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:        b.cfg.Stream,
			Description: "Steward control-plane events (CloudEvents 1.0, structured JSON)",
			Subjects:    []string{SubjectRoot + ".>"},
			Storage:     jetstream.FileStorage,
			Retention:   jetstream.LimitsPolicy,
			MaxAge:      b.cfg.MaxAge,
			Duplicates:  b.cfg.DuplicateWindow,
			Replicas:    replicas,
		})
		return err
	})
	if err != nil {
		url := nc.ConnectedUrlRedacted()
		nc.Close()
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) {
			// Nothing answers JetStream's API: the server runs without it.
			return &NoJetStreamError{URL: url}
		}
		return fmt.Errorf("events: ensure stream %s: %w", b.cfg.Stream, err)
	}
	b.nc, b.js = nc, js
	return nil
}

// streamReplicas is the copies the stream is to keep: Config.Replicas, or
// with 0 what it has now (1 when it does not exist yet).
func (b *Bus) streamReplicas(ctx context.Context, js jetstream.JetStream) (int, error) {
	if b.cfg.Replicas > 0 {
		return b.cfg.Replicas, nil
	}
	s, err := js.Stream(ctx, b.cfg.Stream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return 1, nil
	case err != nil:
		return 0, err
	}
	return max(s.CachedInfo().Config.Replicas, 1), nil
}

func (b *Bus) connect() (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name("steward"),
		nats.MaxReconnects(-1), // a control plane waits for its bus to come back
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				b.logger.Warn("disconnected from nats", "error", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			b.logger.Info("reconnected to nats", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			b.logger.Warn("nats async error", "error", err)
		}),
	}
	if b.cfg.Embedded != nil {
		return b.cfg.Embedded.InProcessConn(opts...)
	}
	nc, err := nats.Connect(b.cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("events: connect to nats: %w", err)
	}
	return nc, nil
}

// Stop stops every subscription, waiting for running handlers (whose ctx is
// cancelled), then closes the connection. It is idempotent and safe before
// Start. It returns ctx's error if ctx ends before the handlers return.
func (b *Bus) Stop(ctx context.Context) error {
	b.mu.Lock()
	nc := b.nc
	subs := make([]*subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.nc, b.js = nil, nil
	b.mu.Unlock()
	if nc == nil {
		return nil
	}
	var err error
	for _, s := range subs {
		err = cmp.Or(err, s.stop(ctx))
	}
	nc.Close()
	return err
}

// Check reports whether the bus can serve: the connection is up and
// JetStream answers an account info request within CheckTimeout. It returns
// [ErrNotStarted], an error wrapping [ErrDisconnected], or JetStream's error.
func (b *Bus) Check(ctx context.Context) error {
	nc, js, err := b.conn()
	if err != nil {
		return err
	}
	if !nc.IsConnected() {
		return fmt.Errorf("%w (%s)", ErrDisconnected, nc.Status())
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.CheckTimeout)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		return fmt.Errorf("events: jetstream account info: %w", err)
	}
	return nil
}

// Publish sends ev on subject now and waits for JetStream to store it, at
// most PublishTimeout. The event id is the message id, so publishing the
// same event twice within DuplicateWindow stores it once. Use [PublishTx]
// instead when the event reports a state change: Publish does not join a
// transaction. It returns errors wrapping [ErrInvalidSubject],
// [ErrInvalidEvent] or [ErrNotStarted], or the publish error.
func (b *Bus) Publish(ctx context.Context, subject string, ev Event) error {
	if err := checkSubject(subject); err != nil {
		return err
	}
	data, err := ev.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = b.publishRaw(ctx, subject, ev.ID(), data)
	return err
}

// publishRaw publishes an encoded event and reports whether JetStream had it
// already (a duplicate id within the window).
func (b *Bus) publishRaw(ctx context.Context, subject, id string, data []byte) (duplicate bool, err error) {
	_, js, err := b.conn()
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.PublishTimeout)
	defer cancel()
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	msg.Header.Set("Content-Type", ContentType)
	ack, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(id), jetstream.WithExpectStream(b.cfg.Stream))
	if err != nil {
		return false, fmt.Errorf("events: publish %s on %s: %w", id, subject, err)
	}
	return ack.Duplicate, nil
}

func (b *Bus) conn() (*nats.Conn, jetstream.JetStream, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nc == nil {
		return nil, nil, ErrNotStarted
	}
	return b.nc, b.js, nil
}
