package events

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/stewardhq/steward/internal/background"
	"github.com/stewardhq/steward/internal/store"
)

// RelayConfig configures a [Relay].
type RelayConfig struct {
	// DB holds the outbox. Required.
	DB *store.DB
	// Bus publishes the events. Required.
	Bus *Bus
	// Logger receives failed passes. Defaults to discarding them.
	Logger *slog.Logger
	// PollInterval is the time between passes when nothing calls
	// [Relay.Notify]. Defaults to 200ms.
	PollInterval time.Duration
	// BatchSize is the most rows one pass reads. A full batch is followed
	// at once by another pass. Defaults to 100.
	BatchSize int
	// PassTimeout bounds one pass. Defaults to 30s.
	PassTimeout time.Duration
}

// publisher is what the relay needs from the [Bus].
type publisher interface {
	publishRaw(ctx context.Context, subject, id string, data []byte) (duplicate bool, err error)
}

// Relay moves committed events from the outbox to JetStream: it reads the
// oldest rows, publishes each with its event id as the message id, then
// deletes the rows it published. It is safe for concurrent use.
//
// Delivery is at least once. A crash between publish and delete publishes
// the row again on the next pass, and every replica runs a relay over the
// same table, so two may publish one row; JetStream drops the second copy
// when it comes within the Bus's DuplicateWindow, and consumers dedupe on
// the event id beyond it. Order is oldest first, best effort: on PostgreSQL
// a row may commit after a newer one was already published.
type Relay struct {
	cfg    RelayConfig
	logger *slog.Logger
	pub    publisher
	notify chan struct{}

	loop background.Loop

	// failing is touched only by the loop goroutine; it keeps a failure
	// that lasts (NATS down) from being logged on every pass.
	failing bool
}

// NewRelay returns a relay that is not started. It panics when cfg.DB or
// cfg.Bus is nil, a programmer's mistake.
func NewRelay(cfg RelayConfig) *Relay {
	if cfg.DB == nil || cfg.Bus == nil {
		panic("events: RelayConfig needs a DB and a Bus")
	}
	cfg.PollInterval = cmp.Or(cfg.PollInterval, 200*time.Millisecond)
	cfg.BatchSize = cmp.Or(cfg.BatchSize, 100)
	cfg.PassTimeout = cmp.Or(cfg.PassTimeout, 30*time.Second)
	logger := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "events.relay")
	return &Relay{cfg: cfg, logger: logger, pub: cfg.Bus, notify: make(chan struct{}, 1)}
}

// Start runs the relay loop in a goroutine and returns at once; the first
// pass starts immediately. ctx only passes its values to the loop: the loop
// runs until [Relay.Stop]. Start on a running relay is a no-op.
func (r *Relay) Start(ctx context.Context) error {
	if err := r.loop.Start(ctx, r.run); !errors.Is(err, background.ErrStarted) {
		return err
	}
	return nil
}

// Stop ends the loop, cancelling a pass in progress, and waits until it has
// returned or ctx ends. It is idempotent and safe before Start. Rows of a
// cancelled pass stay in the outbox for the next run.
func (r *Relay) Stop(ctx context.Context) error {
	if err := r.loop.Stop(ctx); err != nil {
		return fmt.Errorf("events: stop relay: %w", err)
	}
	return nil
}

// Notify asks for a pass now instead of at the next tick, for example right
// after a commit that called [PublishTx]. It never blocks, and notices that
// arrive during a pass collapse into one more pass.
func (r *Relay) Notify() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *Relay) run(ctx context.Context) {
	ticker := time.NewTicker(r.cfg.PollInterval)
	defer ticker.Stop()
	for {
		r.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-r.notify:
		}
	}
}

// pass runs batches until the outbox is drained or a batch fails, and logs
// the failure.
func (r *Relay) pass(ctx context.Context) {
	for ctx.Err() == nil {
		passCtx, cancel := context.WithTimeout(ctx, r.cfg.PassTimeout)
		n, err := r.runOnce(passCtx)
		cancel()
		if err != nil {
			if ctx.Err() == nil { // a cancelled pass at shutdown is no failure
				r.logFailure(ctx, err)
			}
			return
		}
		if r.failing {
			r.failing = false
			r.logger.InfoContext(ctx, "outbox relay recovered")
		}
		if n < r.cfg.BatchSize {
			return
		}
	}
}

func (r *Relay) logFailure(ctx context.Context, err error) {
	if r.failing {
		r.logger.DebugContext(ctx, "outbox relay pass failed again", "error", err)
		return
	}
	r.failing = true
	r.logger.WarnContext(ctx, "outbox relay pass failed; retrying every poll interval", "error", err)
}

// runOnce publishes up to BatchSize of the oldest outbox rows, in order, and
// deletes those it published. It stops at the first failed publish, so the
// rest wait for the next pass, and returns how many rows it published.
func (r *Relay) runOnce(ctx context.Context) (int, error) {
	if r.cfg.DB.Engine() == store.Postgres {
		return r.runClaimed(ctx)
	}
	rows, err := outboxListOldest(ctx, r.cfg.DB, r.cfg.BatchSize)
	if err != nil {
		return 0, fmt.Errorf("events: read outbox: %w", err)
	}
	published, pubErr := r.publishRows(ctx, rows)
	if len(published) > 0 {
		// Delete even when ctx was cancelled mid-batch, so that what is
		// published is not published again by the next run.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := outboxDeleteBySeqs(dctx, r.cfg.DB, published); err != nil {
			return len(published), errors.Join(pubErr, fmt.Errorf("events: delete published outbox rows: %w", err))
		}
	}
	return len(published), pubErr
}

// runClaimed is runOnce on PostgreSQL, where the relays of several
// replicas share one outbox. Each locks the batch it publishes (FOR UPDATE
// SKIP LOCKED) and deletes what it published in the same transaction, so
// two relays never publish one row at once: on a NATS cluster the second
// would be refused, 409 "duplicate message id is in process", and stop its
// pass (the cluster trial saw all three relays stall on each other). A
// relay that dies mid-batch releases its rows to the others; what it had
// published already, the stream deduplicates.
func (r *Relay) runClaimed(ctx context.Context) (int, error) {
	var published []int64
	var pubErr error
	err := r.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		claimed, err := outboxQueries[store.Postgres].OutboxClaimOldest(ctx, tx, int64(r.cfg.BatchSize))
		if err != nil {
			return fmt.Errorf("events: claim outbox rows: %w", err)
		}
		rows := make([]outboxRow, len(claimed))
		for i, c := range claimed {
			rows[i] = outboxRow{seq: c.Seq, id: c.ID, subject: c.Subject, event: json.RawMessage(c.Event)}
		}
		published, pubErr = r.publishRows(ctx, rows)
		if len(published) == 0 {
			return nil
		}
		list, err := json.Marshal(published)
		if err != nil {
			return err
		}
		if _, err := outboxQueries[store.Postgres].OutboxDeleteBySeqs(ctx, tx, json.RawMessage(list)); err != nil {
			return fmt.Errorf("events: delete published outbox rows: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, errors.Join(pubErr, err)
	}
	return len(published), pubErr
}

// publishRows publishes rows in order until one fails, and returns the
// seqs of those published and the failure.
func (r *Relay) publishRows(ctx context.Context, rows []outboxRow) ([]int64, error) {
	published := make([]int64, 0, len(rows))
	for _, row := range rows {
		dup, err := r.pub.publishRaw(ctx, row.subject, row.id, row.event)
		if err != nil {
			return published, err
		}
		if dup {
			r.logger.DebugContext(ctx, "event was already in the stream", "event_id", row.id)
		}
		published = append(published, row.seq)
	}
	return published, nil
}
