package live

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Subject is where the Feeds send and hear order changes.
const Subject = "steward_notice.orders"

// maxIDs bounds the ids in one notice; a larger batch is sent as "many",
// which every watcher takes as its own order having changed.
const maxIDs = 500

// Notifier sends and hears notices (events.Bus).
type Notifier interface {
	Notify(subject string, data []byte) error
	Listen(subject string, f func(data []byte)) (stop func(), err error)
}

// Config configures a [Feed].
type Config struct {
	// Bus carries the notices between replicas. Without one, changes go
	// only to this process's watchers.
	Bus Notifier
	// Interval is how long changes are gathered before they are sent.
	// Defaults to 200ms.
	Interval time.Duration
	Logger   *slog.Logger
}

// Feed gathers order changes and hands them to watchers. Build it with
// [New]; it is safe for concurrent use.
type Feed struct {
	bus      Notifier
	interval time.Duration
	log      *slog.Logger

	mu       sync.Mutex
	pending  map[string]struct{}
	watchers map[*Watcher]struct{}
	seq      uint64 // notices heard: pages carry it to know what they missed
	wake     chan struct{}
	stop     func()
	done     chan struct{}
}

// notice is what one message on Subject says.
type notice struct {
	Orders []string `json:"orders,omitempty"`
	Many   bool     `json:"many,omitempty"`
}

// New returns a Feed that sends nothing until [Feed.Start].
func New(cfg Config) *Feed {
	return &Feed{bus: cfg.Bus, interval: cmp.Or(cfg.Interval, 200*time.Millisecond),
		log:     cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).With("component", "live"),
		pending: map[string]struct{}{}, watchers: map[*Watcher]struct{}{}, wake: make(chan struct{}, 1)}
}

// Start listens for other replicas' notices and starts sending this one's.
// It returns the bus's error if it cannot listen.
func (f *Feed) Start(ctx context.Context) error {
	stopListening := func() {}
	if f.bus != nil {
		var err error
		if stopListening, err = f.bus.Listen(Subject, f.heard); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.done = make(chan struct{})
	f.stop = func() { cancel(); stopListening() }
	go f.send(ctx)
	return nil
}

// Stop stops sending and hearing; it returns once the sender has ended.
// Changes not sent yet are dropped (they are hints). Safe before Start.
func (f *Feed) Stop() {
	if f.stop == nil {
		return
	}
	f.stop()
	<-f.done
}

// Changed records that order id changed. It never blocks: it is called
// from transactions' after-commit functions.
func (f *Feed) Changed(id string) {
	f.mu.Lock()
	f.pending[id] = struct{}{}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// send sends what Changed gathered, at most once an interval.
func (f *Feed) send(ctx context.Context) {
	defer close(f.done)
	timer := time.NewTimer(f.interval)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		}
		// Gather for an interval: one notice for a burst of changes.
		timer.Reset(f.interval)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		f.mu.Lock()
		n := notice{Many: len(f.pending) > maxIDs}
		if !n.Many {
			n.Orders = make([]string, 0, len(f.pending))
			for id := range f.pending {
				n.Orders = append(n.Orders, id)
			}
			slices.Sort(n.Orders)
		}
		clear(f.pending)
		f.mu.Unlock()
		data, _ := json.Marshal(n) // strings and a bool always encode
		if f.bus == nil {
			f.heard(data)
			continue
		}
		if err := f.bus.Notify(Subject, data); err != nil {
			f.log.Debug("send an order change notice", "error", err)
		}
	}
}

// heard hands a notice to the watchers it concerns.
func (f *Feed) heard(data []byte) {
	var n notice
	if err := json.Unmarshal(data, &n); err != nil {
		f.log.Warn("an order change notice does not decode", "error", err)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	for w := range f.watchers {
		if w.order == "" || n.Many || slices.Contains(n.Orders, w.order) {
			select {
			case w.c <- struct{}{}:
			default: // it has one waiting already
			}
		}
	}
}

// Watcher is told when the orders it watches change.
type Watcher struct {
	feed  *Feed
	order string
	c     chan struct{}
}

// Seq counts the notices this Feed heard. A page shown now and watched
// from seq on misses nothing: read Seq before what the page shows.
func (f *Feed) Seq() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

// Watch returns a watcher of order id, or of every order when id is "".
// Close it when done.
func (f *Feed) Watch(id string) *Watcher { return f.WatchSince(id, f.Seq()) }

// WatchSince is Watch for a page shown at seq (from [Feed.Seq]): if any
// notice came since, the watcher starts with a change to receive, as the
// page may have missed it.
func (f *Feed) WatchSince(id string, seq uint64) *Watcher {
	w := &Watcher{feed: f, order: id, c: make(chan struct{}, 1)}
	f.mu.Lock()
	f.watchers[w] = struct{}{}
	if f.seq != seq {
		w.c <- struct{}{}
	}
	f.mu.Unlock()
	return w
}

// Changes receives once whenever one or more of the watched orders changed
// since it last received.
func (w *Watcher) Changes() <-chan struct{} { return w.c }

// Close stops the watcher; it is idempotent.
func (w *Watcher) Close() {
	w.feed.mu.Lock()
	delete(w.feed.watchers, w)
	w.feed.mu.Unlock()
}
