package adapter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/events"
)

// Subscriber is the durable JetStream subscription a [Consumer] reads
// reconcile events from (*events.Bus).
type Subscriber interface {
	Subscribe(ctx context.Context, p events.SubscribeParams) (stop func(), err error)
}

// ConsumerConfig configures a [Consumer]. Executor and Bus are required.
type ConsumerConfig struct {
	Executor *Executor
	Bus      Subscriber
	Logger   *slog.Logger
	// Timeout bounds one reconcile. Defaults to 5m: the subscription keeps
	// the event while it runs, however long.
	Timeout time.Duration
	// Backoff is the delay before an event whose reconcile failed for a
	// transient reason comes back. Defaults to [DefaultBackoff].
	Backoff func(delivered uint64) time.Duration
	// Workers is how many events of a service type are reconciled at once,
	// each order's one after the other. Defaults to [DefaultWorkers].
	Workers int
}

// DefaultWorkers is [ConsumerConfig.Workers]'s default. A reconcile mostly
// waits on Steward's API and Kubernetes: one at a time, an adapter took 8
// events a second on two cores (issue 28's cluster trial).
const DefaultWorkers = 8

// DefaultBackoff doubles from 1s per delivery, up to a minute.
func DefaultBackoff(delivered uint64) time.Duration {
	d := time.Second
	for i := uint64(1); i < delivered && d < time.Minute; i++ {
		d *= 2
	}
	return min(d, time.Minute)
}

// Consumer runs an [Executor] on the reconcile events of its service types
// from a durable JetStream consumer per type, which every replica of the
// adapter shares (each event goes to one of them at a time). An event is
// acknowledged only once its status report is stored, or when nothing can
// ever come of it; a transient failure (the Kubernetes API or Steward
// unreachable, 5xx, 429) sends it back after a backoff, and a replica that
// dies mid-reconcile gives it back after the bus's AckWait.
type Consumer struct {
	cfg    ConsumerConfig
	name   string
	logger *slog.Logger

	mu    sync.Mutex
	stops []func()
}

// NewConsumer checks cfg.
func NewConsumer(cfg ConsumerConfig) (*Consumer, error) {
	if cfg.Executor == nil || cfg.Bus == nil {
		return nil, errors.New("adapter: ConsumerConfig.Executor and Bus are required")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Minute
	}
	if cfg.Backoff == nil {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	name := cfg.Executor.cfg.Adapter.Name
	return &Consumer{cfg: cfg, name: name, logger: cfg.Logger.With("component", "adapter", "adapter", name)}, nil
}

// Durable is the JetStream consumer the replicas of adapter share for a
// service type's events.
func Durable(adapter, serviceType string) string {
	return "adapter_" + strings.NewReplacer(".", "_", "*", "_", ">", "_").Replace(adapter+"__"+serviceType)
}

// Start subscribes to every service type's events.
func (c *Consumer) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.cfg.Executor.cfg.ServiceTypes {
		stop, err := c.cfg.Bus.Subscribe(ctx, events.SubscribeParams{
			Subject: eventTypePrefix + st, Durable: Durable(c.name, st), Handler: c.handle,
			Timeout: c.cfg.Timeout, Backoff: c.cfg.Backoff, Workers: c.cfg.Workers, Key: orderOf,
		})
		if err != nil {
			for _, s := range c.stops {
				s()
			}
			c.stops = nil
			return fmt.Errorf("adapter %s: subscribe to %s: %w", c.name, st, err)
		}
		c.stops = append(c.stops, stop)
	}
	c.logger.InfoContext(ctx, "adapter consuming reconcile events", "service_types", c.cfg.Executor.cfg.ServiceTypes)
	return nil
}

// Stop ends the subscriptions, waiting for running reconciles; an event
// whose reconcile is cut short comes back to a replica.
func (c *Consumer) Stop() {
	c.mu.Lock()
	stops := c.stops
	c.stops = nil
	c.mu.Unlock()
	for _, s := range stops {
		s()
	}
}

// orderOf is the order a reconcile event is about ("" when its data does
// not say): one order's events are reconciled in order.
func orderOf(ev events.Event) string {
	var data struct {
		ID string `json:"id"`
	}
	_ = ev.DataAs(&data)
	return data.ID
}

// handle reconciles one event. nil acknowledges it.
func (c *Consumer) handle(ctx context.Context, ev events.Event) error {
	var data map[string]any
	if err := ev.DataAs(&data); err != nil {
		c.logger.ErrorContext(ctx, "dropping a reconcile event whose data is not a JSON object", "event_id", ev.ID(), "error", err)
		return nil
	}
	out, err := c.cfg.Executor.Execute(ctx, Event{ID: ev.ID(), Type: ev.Type(), Data: data})
	log := c.logger.With("event_id", ev.ID(), "order_id", out.OrderID, "generation", out.Generation, "mode", out.Mode)
	switch {
	case err != nil: // an event this adapter can never handle
		log.ErrorContext(ctx, "dropping a reconcile event", "error", err)
		return nil
	case out.Retry != nil:
		return out.Retry // transient: redelivered after the backoff, nothing reported
	}
	if err := c.cfg.Executor.PutReport(ctx, out); err != nil {
		if errors.Is(err, ErrTransient) {
			return err
		}
		// Steward refused the report (a bug here or there): retrying the
		// same report cannot help, and the sentinel sends the order again.
		log.ErrorContext(ctx, "Steward refused the status report", "error", err)
		return nil
	}
	if out.Report != nil {
		log.InfoContext(ctx, "reconciled", "conditions", conditionsLine(out.Report.Conditions))
	}
	return nil
}

// conditionsLine is a report's conditions for a log line: "Applied=True …".
func conditionsLine(cs []Condition) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Type + "=" + c.Status
		if c.Reason != "" {
			parts[i] += "(" + c.Reason + ")"
		}
	}
	return strings.Join(parts, " ")
}
