package adapter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"
)

// Modes of the resources phase.
const (
	ModeCreate = "create"
	ModeDelete = "delete"
)

// What the executor adds to every applied object, so an operator (and a
// label-selector discovery) can tell which order and generation it is for.
const (
	LabelOrderID         = "steward.dev/order-id"
	AnnotationGeneration = "steward.dev/generation"
)

// eventTypePrefix prefixes the service type in a reconcile event's type.
const eventTypePrefix = "steward.reconcile."

// Event is a reconcile CloudEvent from Steward's sentinel, decoded by the
// caller. Data is the event's JSON data (id, kind, href, project,
// service_type, generation, deleted_at, reason).
type Event struct {
	ID   string
	Type string
	Data map[string]any
}

// Deps are what an [Executor] reaches the world through.
type Deps struct {
	// Transport reaches Kubernetes. Required.
	Transport Transport
	// API reaches Steward. Required.
	API API
	// Env looks up env.<VAR> param sources. Defaults to os.LookupEnv.
	Env func(string) (string, bool)
	// Now is the clock for observed_time and CEL's now. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Outcome is what one Execute did and what to do about it.
type Outcome struct {
	OrderID    string
	Project    string
	Generation int64
	// Mode is ModeCreate or ModeDelete.
	Mode string
	// Report is the status report to PUT (see [Executor.PutReport]). Its
	// observed_generation is the event's generation: a newer generation
	// has its own event, and the server discards a report for a
	// generation the order is past. It is nil when there is nothing to
	// report: the order is gone (the API answered 404 for it), or Retry
	// is set.
	Report *Report
	// Retry is set when the reconcile hit a transient failure (Kubernetes
	// or the Steward API unreachable, 5xx, 429, a timeout): the caller
	// should not report, and should redeliver the event later. Terminal
	// failures are reported (Health=False) instead, and not retried.
	Retry error
}

// Executor runs a [Config] against reconcile events. It is safe for
// concurrent use: Execute keeps its state per call.
type Executor struct {
	cfg  *Config
	prog *program
	deps Deps
	log  *slog.Logger
}

// NewExecutor checks cfg and compiles it. It returns a [*ConfigError] for a
// config that cannot run (the same checks as [Parse], except the deletion
// order, which Execute checks and reports on the order), and an error when
// Transport or API is missing.
func NewExecutor(cfg *Config, deps Deps) (*Executor, error) {
	if cfg == nil {
		return nil, errors.New("adapter: nil config")
	}
	if deps.Transport == nil || deps.API == nil {
		return nil, errors.New("adapter: Deps.Transport and Deps.API are required")
	}
	prog, ps := check(cfg, false)
	if err := ps.err(""); err != nil {
		return nil, err
	}
	if deps.Env == nil {
		deps.Env = os.LookupEnv
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "adapter.executor", "adapter", cfg.Adapter.Name)
	return &Executor{cfg: cfg, prog: prog, deps: deps, log: log}, nil
}

// Execute reconciles the order of one reconcile event: params,
// preconditions, then the resources in creation or deletion mode, then
// post, which builds the report. It blocks until done; ctx bounds it (a
// cancelled ctx makes a Retry outcome).
//
// Everything that goes wrong with the order is in the Outcome (a reported
// failure, or Retry). The error is only for an event this executor cannot
// process at all, and wraps [ErrUnhandledEvent] or [ErrInvalidEvent]; the
// caller should drop such an event.
func (e *Executor) Execute(ctx context.Context, ev Event) (Outcome, error) {
	in, err := e.readEvent(ev)
	if err != nil {
		return Outcome{}, err
	}
	r := newRun(e, in)
	out := Outcome{OrderID: in.orderID, Project: in.project, Generation: in.generation}
	err = r.reconcile(ctx)
	out.Mode = r.mode
	log := e.log.With("event_id", ev.ID, "order_id", in.orderID, "generation", in.generation, "mode", r.mode)
	switch {
	case errors.Is(err, errOrderGone):
		log.InfoContext(ctx, "order is gone; nothing to report")
		return out, nil
	case err != nil:
		// reconcile returns only gone or transient errors; the rest are
		// recorded in r and reported.
		out.Retry = err
		log.DebugContext(ctx, "transient failure; retry", "error", err)
		return out, nil
	}
	out.Report = r.post(ctx)
	log.DebugContext(ctx, "reconciled", "situation", r.sit.String())
	return out, nil
}

// eventInfo is what the executor reads from an event's data.
type eventInfo struct {
	orderID    string
	project    string
	href       string
	generation int64
	deleting   bool // deleted_at is set
	data       map[string]any
}

func (e *Executor) readEvent(ev Event) (eventInfo, error) {
	st, ok := strings.CutPrefix(ev.Type, eventTypePrefix)
	if !ok || !slices.Contains(e.cfg.ServiceTypes, st) {
		return eventInfo{}, fmt.Errorf("%w: type %q (want %s<%s>)", ErrUnhandledEvent, ev.Type,
			eventTypePrefix, strings.Join(e.cfg.ServiceTypes, "|"))
	}
	data, _ := normalize(ev.Data).(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	in := eventInfo{data: data}
	in.orderID, _ = data["id"].(string)
	if in.orderID == "" {
		return eventInfo{}, fmt.Errorf("%w %s: data.id is missing", ErrInvalidEvent, ev.ID)
	}
	in.generation, _ = data["generation"].(int64)
	if in.generation < 1 {
		return eventInfo{}, fmt.Errorf("%w %s: data.generation must be a positive integer, got %v", ErrInvalidEvent, ev.ID, data["generation"])
	}
	in.project, _ = data["project"].(string)
	in.href, _ = data["href"].(string)
	deletedAt, _ := data["deleted_at"].(string)
	in.deleting = deletedAt != ""
	return in, nil
}

// orderPath reports whether path is the order's own URL, so that a 404
// there means the order is gone rather than a broken config.
func (in eventInfo) orderPath(path string) bool {
	path, _, _ = strings.Cut(path, "?")
	path = strings.TrimSuffix(path, "/")
	return path == strings.TrimSuffix(in.href, "/") && in.href != "" ||
		path == "/api/v1/catalog-item-instances/"+in.orderID
}
