package events

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Handler handles one event. Returning nil acknowledges it; an error has it
// redelivered after the Bus's RetryDelay, so a handler must be idempotent
// (delivery is at least once: dedupe on [Event.ID] where it matters). The
// ctx ends after AckWait, or when the subscription stops.
type Handler func(ctx context.Context, ev Event) error

// SubscribeParams says what to subscribe to.
type SubscribeParams struct {
	// Subject filters the stream's subjects, wildcards allowed
	// ("steward.instance.>"). Required.
	Subject string
	// Durable names the JetStream consumer, which keeps its position across
	// restarts. Replicas subscribing with the same name share its events,
	// each handled by one of them. Required; no dots or wildcards.
	Durable string
	// Handler is called for each event, one at a time unless Workers is
	// above 1. Required.
	Handler Handler
	// Workers, above 1, handles that many events at once, and Key then
	// keeps the events of one key (an order) in order: each key's events go
	// to one worker, one after the other. Handlers that mostly wait on the
	// network (an adapter's API and Kubernetes calls) gain the most.
	Workers int
	// Key names what an event is about, for Workers; nil (or "") puts
	// every event on one worker.
	Key func(Event) string
	// Timeout bounds one call of Handler. Defaults to the Bus's AckWait.
	// While a handler runs, the subscription tells JetStream it is still
	// working on the event (every third of AckWait), so a handler that takes
	// longer than AckWait keeps its event: no other subscriber of the
	// durable gets it meanwhile. A subscriber that dies stops telling, and
	// the event goes to another one after AckWait.
	Timeout time.Duration
	// Backoff is how long JetStream waits before redelivering an event
	// whose handler failed, given how many times it was delivered (1 for
	// the first). Defaults to the Bus's RetryDelay every time.
	Backoff func(delivered uint64) time.Duration
}

// subscription is one running durable consumer.
type subscription struct {
	bus    *Bus
	params SubscribeParams
	cc     jetstream.ConsumeContext
	cancel context.CancelFunc // ends the handlers' ctx
	// queues feed the workers (nil with one worker); workers ends with them.
	queues  []chan jetstream.Msg
	workers sync.WaitGroup
}

// pullExpiry bounds each pull request of a subscription (nats.go's default
// is 30s, with a heartbeat every 15s). When the NATS node holding the
// consumer dies with SIGKILL, its pending pulls are lost without a word
// and the subscriber waits out its pull before asking the new leader: the
// cluster trial saw an adapter idle 30s after a node's kill. With 5s (and a
// heartbeat every 2.5s) it waits at most that.
const pullExpiry = 5 * time.Second

// Subscribe creates or updates the durable consumer p.Durable and calls
// p.Handler for each event on p.Subject, starting with the oldest it has not
// acknowledged. ctx bounds the setup only; handlers run until the returned
// stop is called or the Bus stops, with ctx's values. stop is idempotent and
// returns once no handler runs; it must not be called from a handler.
//
// A handler's error is logged here (once, as a warning) and the event is
// redelivered later; an undecodable message can never succeed, so it is
// logged as an error and terminated.
func (b *Bus) Subscribe(ctx context.Context, p SubscribeParams) (stop func(), err error) {
	if p.Subject == "" || p.Durable == "" || p.Handler == nil {
		return nil, errors.New("events: subscribe needs a subject, a durable name and a handler")
	}
	_, js, err := b.conn()
	if err != nil {
		return nil, err
	}
	var cons jetstream.Consumer
	err = b.provision(ctx, "consumer "+p.Durable, func(ctx context.Context) error {
		var err error
		cons, err = js.CreateOrUpdateConsumer(ctx, b.cfg.Stream, jetstream.ConsumerConfig{
			Durable:       p.Durable,
			FilterSubject: p.Subject,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       b.cfg.AckWait,
			DeliverPolicy: jetstream.DeliverAllPolicy,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("events: consumer %s on %s: %w", p.Durable, p.Subject, err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &subscription{bus: b, params: p, cancel: cancel}
	deliver := func(msg jetstream.Msg) { s.handle(runCtx, msg) }
	if p.Workers > 1 {
		s.startWorkers(runCtx)
		deliver = s.dispatch
	}
	s.cc, err = cons.Consume(deliver, jetstream.PullExpiry(pullExpiry))
	if err != nil {
		cancel()
		s.stopWorkers()
		return nil, fmt.Errorf("events: consume %s: %w", p.Durable, err)
	}
	b.mu.Lock()
	if b.nc == nil { // the Bus stopped meanwhile and would not stop s
		b.mu.Unlock()
		_ = s.stop(context.Background())
		return nil, ErrNotStarted
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { _ = s.stop(context.Background()) }) }, nil
}

// handle runs the handler for one message and settles it. Messages arrive
// one at a time per subscription, or per worker.
func (s *subscription) handle(ctx context.Context, msg jetstream.Msg) {
	log := s.bus.logger.With("durable", s.params.Durable, "subject", msg.Subject())
	ev, err := ParseEvent(msg.Data())
	if err != nil {
		log.ErrorContext(ctx, "dropping a message that is not a CloudEvent", "error", err)
		_ = msg.Term()
		return
	}
	hctx, cancel := context.WithTimeout(ctx, cmp.Or(s.params.Timeout, s.bus.cfg.AckWait))
	stopBeat := heartbeat(msg, s.bus.cfg.AckWait/3)
	err = s.params.Handler(hctx, ev)
	stopBeat()
	cancel()
	if err == nil {
		if err := msg.Ack(); err != nil {
			log.WarnContext(ctx, "ack event", "event_id", ev.ID(), "error", err)
		}
		return
	}
	if ctx.Err() != nil {
		// Stopping: not the handler's failure. Hand the event back for the
		// next subscriber right away.
		_ = msg.Nak()
		return
	}
	delay := s.bus.cfg.RetryDelay
	attrs := []any{"event_id", ev.ID(), "event_type", ev.Type(), "error", err}
	if md, mdErr := msg.Metadata(); mdErr == nil {
		attrs = append(attrs, "delivery", md.NumDelivered)
		if s.params.Backoff != nil {
			delay = s.params.Backoff(md.NumDelivered)
		}
	}
	log.WarnContext(ctx, "event handler failed; will redeliver", append(attrs, "delay", delay)...)
	_ = msg.NakWithDelay(delay)
}

// workerQueue is how many events wait for one worker; past it, delivery
// waits for that worker, and JetStream holds the rest.
const workerQueue = 8

// startWorkers starts Workers goroutines, each handling its queue in order.
func (s *subscription) startWorkers(ctx context.Context) {
	s.queues = make([]chan jetstream.Msg, s.params.Workers)
	for i := range s.queues {
		q := make(chan jetstream.Msg, workerQueue)
		s.queues[i] = q
		s.workers.Go(func() {
			for msg := range q {
				if ctx.Err() != nil {
					_ = msg.Nak() // stopping: the next subscriber takes it now
					continue
				}
				s.handle(ctx, msg)
			}
		})
	}
}

// dispatch queues msg for the worker of its key.
func (s *subscription) dispatch(msg jetstream.Msg) {
	key := ""
	if s.params.Key != nil {
		if ev, err := ParseEvent(msg.Data()); err == nil {
			key = s.params.Key(ev)
		}
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	s.queues[h.Sum32()%uint32(len(s.queues))] <- msg
}

// stopWorkers closes the queues and waits for the workers; delivery must
// have stopped.
func (s *subscription) stopWorkers() {
	for _, q := range s.queues {
		close(q)
	}
	s.workers.Wait()
}

// heartbeat tells JetStream every interval that msg is still being
// handled, until the returned stop is called (which waits for it).
func heartbeat(msg jetstream.Msg, interval time.Duration) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(max(interval, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// stop ends the handlers' ctx, stops consuming and waits until the running
// handlers, if any, have returned.
func (s *subscription) stop(ctx context.Context) error {
	s.cancel()
	s.cc.Stop()
	b := s.bus
	b.mu.Lock()
	delete(b.subs, s)
	b.mu.Unlock()
	select {
	case <-s.cc.Closed():
		// Delivery has stopped: no dispatch sends any more.
		s.stopWorkers()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("events: stop subscription %s: %w", s.params.Durable, ctx.Err())
	}
}
