// Package peers knows which Steward processes share the store and which of
// them are dead, so that the work a dead process held is taken over within
// seconds, not after a lock or rescue timeout (issue 8).
//
// Each process registers a row with its host and pid and renews a lease on
// it every Interval. A peer is dead when:
//   - it runs on this host (same hostname, pid namespace and boot) and its
//     pid is no longer a live process, or is this process's own pid (an
//     earlier incarnation, e.g. a restarted container); this is exact and
//     immediate, so a restart on the same machine takes over at once;
//   - it runs elsewhere and its lease expired (TTL without a renewal).
//
// A process reaps the dead it finds, at start (before it runs any job) and
// on every tick: in one transaction it calls every [Reaper] with their ids
// and deletes their rows. Reapers are idempotent, so two processes reaping
// the same peer is harmless.
package peers

import (
	"cmp"
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stewardhq/steward/internal/background"
	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// Reaper takes over what dead processes held (their running jobs, their
// in-flight requests), in the reaping transaction.
type Reaper func(ctx context.Context, tx *store.Tx, dead []string) error

// Config configures a [Registry]. DB is required.
type Config struct {
	DB     *store.DB
	Logger *slog.Logger
	// Interval between lease renewals and reaping passes. Defaults to 1s.
	Interval time.Duration
	// TTL is how long a lease lasts without renewal; a process on another
	// host is dead once its lease expired. Defaults to 5×Interval.
	TTL time.Duration
	// Now reads the clock. Defaults to time.Now.
	Now func() time.Time
}

// Registry is this process's entry among its peers.
type Registry struct {
	cfg     Config
	q       *queries
	id      string
	host    string
	pid     int
	started time.Time

	mu      sync.Mutex
	reapers []namedReaper

	// registered is set once Start has registered and reaped: Stop then
	// reaps this process itself.
	registered atomic.Bool
	lease      background.Loop
}

type namedReaper struct {
	name string
	fn   Reaper
}

// New returns the registry of this process with a fresh id; it writes
// nothing until Start.
func New(cfg Config) *Registry {
	cfg.Interval = cmp.Or(cfg.Interval, time.Second)
	cfg.TTL = cmp.Or(cfg.TTL, 5*cfg.Interval)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	hostname, _ := os.Hostname()
	hostname = cmp.Or(hostname, "localhost")
	pid := os.Getpid()
	var b [4]byte
	_, _ = rand.Read(b[:])
	short := hostname
	if len(short) > 60 {
		short = short[:60]
	}
	return &Registry{
		cfg:  cfg,
		q:    newQueries(cfg.DB.Engine()),
		id:   fmt.Sprintf("%s-%d-%s", short, pid, hex.EncodeToString(b[:])),
		host: hostKey(hostname),
		pid:  pid,
	}
}

// ID identifies this process among its peers (and is its River client id).
func (r *Registry) ID() string { return r.id }

// AddReaper adds a reaper; call it before Start.
func (r *Registry) AddReaper(name string, fn Reaper) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reapers = append(r.reapers, namedReaper{name, fn})
}

// Start registers this process, reaps the dead it can see (so a restart
// takes over its previous incarnation's work before running any), and
// renews the lease and reaps on every Interval until Stop.
func (r *Registry) Start(ctx context.Context) error {
	r.started = r.now()
	if err := r.register(ctx); err != nil {
		return err
	}
	if _, err := r.Reap(ctx); err != nil {
		return err
	}
	r.registered.Store(true)
	return r.lease.Start(ctx, r.loop)
}

// Stop ends the lease renewal and reaps this process itself: call it after
// the work it reaps has stopped, so that whatever did not finish in time
// (a job past the shutdown timeout) is handed over at once. It is safe
// after a failed Start.
func (r *Registry) Stop(ctx context.Context) error {
	if !r.registered.Swap(false) {
		return nil
	}
	if err := r.lease.Stop(ctx); err != nil {
		return fmt.Errorf("peers: stop renewing the lease of %s: %w", r.id, err)
	}
	if err := r.reap(ctx, []string{r.id}); err != nil {
		return fmt.Errorf("peers: unregister %s: %w", r.id, err)
	}
	return nil
}

// loop renews the lease and reaps on every Interval until Stop cancels ctx.
// A pass under way when Stop comes finishes: it is bounded on its own.
func (r *Registry) loop(ctx context.Context) {
	tick := time.NewTicker(r.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(r.cfg.Interval, time.Second)*5)
		if err := r.renew(tctx); err != nil {
			r.cfg.Logger.WarnContext(ctx, "renew process lease", "process_id", r.id, "error", err)
		}
		if _, err := r.Reap(tctx); err != nil {
			r.cfg.Logger.WarnContext(ctx, "reap dead processes", "error", err)
		}
		cancel()
	}
}

func (r *Registry) now() time.Time { return store.Now(r.cfg.Now) }

func (r *Registry) register(ctx context.Context) error {
	now := r.now()
	_, err := r.q.PeerRegister(ctx, r.cfg.DB, PeerRegisterParams{ID: r.id, Host: r.host, Pid: int64(r.pid),
		StartedAt: r.started, HeartbeatAt: now, ExpiresAt: now.Add(r.cfg.TTL)})
	if err != nil {
		return fmt.Errorf("peers: register %s: %w", r.id, err)
	}
	return nil
}

// renew extends the lease. A lease that is gone means a peer took this
// process for dead (it stalled past its TTL) and may have taken over its
// work: say so loudly, and register again.
func (r *Registry) renew(ctx context.Context) error {
	now := r.now()
	n, err := r.q.PeerRenew(ctx, r.cfg.DB, PeerRenewParams{HeartbeatAt: now, ExpiresAt: now.Add(r.cfg.TTL), ID: r.id})
	if err != nil {
		return err
	}
	if n == 0 {
		r.cfg.Logger.ErrorContext(ctx, "this process's lease was reaped by a peer (it stalled past its TTL); "+
			"work it was running may run twice", "process_id", r.id, "ttl", r.cfg.TTL)
		return r.register(ctx)
	}
	return nil
}

// Reap takes over the work of every dead peer and returns their ids.
func (r *Registry) Reap(ctx context.Context) ([]string, error) {
	dead, err := r.dead(ctx)
	if err != nil || len(dead) == 0 {
		return nil, err
	}
	if err := r.reap(ctx, dead); err != nil {
		return nil, fmt.Errorf("peers: reap %v: %w", dead, err)
	}
	r.cfg.Logger.InfoContext(ctx, "took over the work of dead processes", "dead", dead, "process_id", r.id)
	return dead, nil
}

// reap runs the reapers for ids and deletes their rows, in one transaction.
func (r *Registry) reap(ctx context.Context, ids []string) error {
	r.mu.Lock()
	reapers := append([]namedReaper(nil), r.reapers...)
	r.mu.Unlock()
	return r.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		for _, rp := range reapers {
			if err := rp.fn(ctx, tx, ids); err != nil {
				return fmt.Errorf("%s: %w", rp.name, err)
			}
		}
		_, err := r.q.PeerDelete(ctx, tx, ids)
		return err
	})
}

// dead lists the peers that are gone.
func (r *Registry) dead(ctx context.Context) ([]string, error) {
	peers, err := r.q.PeerListOthers(ctx, r.cfg.DB, r.id)
	if err != nil {
		return nil, fmt.Errorf("peers: list: %w", err)
	}
	now := r.now()
	var dead []string
	for _, p := range peers {
		if p.Host == r.host {
			if p.Pid == int64(r.pid) || !pidAlive(int(p.Pid)) {
				dead = append(dead, p.ID)
			}
			continue
		}
		if p.ExpiresAt.Before(now) {
			dead = append(dead, p.ID)
		}
	}
	return dead, nil
}

// hostKey names this machine and pid namespace: two processes with the same
// key see each other's pids. The boot id keeps a pid from before a reboot
// from being taken for a live one.
func hostKey(hostname string) string {
	parts := []string{hostname}
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		parts = append(parts, ns)
	}
	if boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		parts = append(parts, strings.TrimSpace(string(boot)))
	}
	return strings.Join(parts, "/")
}

// pidAlive reports whether pid is a live process on this host. EPERM means
// it exists but belongs to another user.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
