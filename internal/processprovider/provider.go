package processprovider

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// Reporter sends one status report to Steward; [provider.StatusReporter]
// (the SDK's HTTP and NATS reporters) satisfies it. Report must honour ctx;
// an error makes the provider retry the report (see [Config.ReportAttempts]).
type Reporter interface {
	Report(ctx context.Context, r provider.StatusReport) error
}

// ReporterFunc adapts a function to [Reporter].
type ReporterFunc func(ctx context.Context, r provider.StatusReport) error

// Report calls f.
func (f ReporterFunc) Report(ctx context.Context, r provider.StatusReport) error { return f(ctx, r) }

// Config configures a [Provider]. A zero field takes the default it documents.
type Config struct {
	// Reporter receives every status change. Required.
	Reporter Reporter
	// Logger receives the provider's logs. Defaults to discarding them.
	Logger *slog.Logger
	// WorkDir holds one directory per instance, WorkDir/<instance_id>, which
	// is the process's working directory and HOME and holds its stdout.log
	// and stderr.log, and the instances' records in WorkDir/.state (see
	// Restore). It is created when needed. Required unless NoOp.
	WorkDir string
	// NoOp accepts creates and updates and reports RUNNING without starting
	// anything (benchmark mode); spec.process.command is then optional.
	NoOp bool
	// AllowCommands are the commands (spec.process.command[0], compared as
	// written: "sleep" and "/bin/sleep" are two entries) the provider runs;
	// any other is refused. "*" allows every command. Defaults to
	// DefaultAllowCommands.
	AllowCommands []string
	// StopGrace is how long a stopping process group has between SIGTERM and
	// SIGKILL. Defaults to 5s.
	StopGrace time.Duration
	// RestartBackoff is the delay before the first restart of a process; it
	// doubles with each consecutive restart. Defaults to 1s.
	RestartBackoff time.Duration
	// RestartBackoffMax caps the restart delay. Defaults to 30s.
	RestartBackoffMax time.Duration
	// RestartResetAfter is how long a process must run for its exit not to
	// count as consecutive with the previous one: the restart count that
	// spec.max_restarts bounds, and the backoff, start again from zero.
	// Defaults to 10m.
	RestartResetAfter time.Duration
	// ReportAttempts, when above zero, is how many times a report (status,
	// runtime or repair) is tried before it is dropped and logged. Defaults
	// to 0: a report is tried until Steward takes or refuses it.
	ReportAttempts int
	// ReportBackoff is the delay before the second attempt of a report; it
	// doubles with each further attempt, up to ReportBackoffMax. Defaults
	// to 500ms.
	ReportBackoff time.Duration
	// ReportBackoffMax caps the delay between attempts of a report.
	// Defaults to 30s.
	ReportBackoffMax time.Duration
	// ReportTimeout bounds each attempt of a report. Defaults to 10s.
	ReportTimeout time.Duration
	// ReportFlushTimeout bounds how long Stop goes on delivering the
	// reports not yet sent once every process is settled; what is still
	// unsent then is logged as abandoned. Defaults to 10s.
	ReportFlushTimeout time.Duration
	// Now gives the ObservedTime of reports and times process runs.
	// Defaults to time.Now.
	Now func() time.Time
	// Runtime receives the runtime reports of instances with spec.members
	// and the progress reports of repair operations; [provider.HTTPReporter]
	// satisfies it. Optional: without it nothing of either is reported,
	// though repairs still run.
	Runtime RuntimeReporter
	// RepairSettle is how long a repair waits after restarting members
	// before it checks that they still run. Defaults to 1s.
	RepairSettle time.Duration
	// WatchInterval is how often a supervised process is checked for its
	// exit (a process is polled, not waited for, so that it can outlive
	// the provider). Defaults to 100ms.
	WatchInterval time.Duration
}

// Provider realises `container` and `process-cluster` orders as supervised
// local processes. It implements [provider.Provider], [provider.Updater] and
// [provider.Repairer] and is safe for concurrent use. Its zero value is not
// usable: build it with [New], take over what an earlier provider left
// with [Provider.Restore], and end it with [Provider.Stop], which leaves
// every process running for the next provider to adopt.
type Provider struct {
	cfg    Config
	logger *slog.Logger

	// runCtx bounds status reports; Stop cancels it once every process is down.
	runCtx    context.Context
	cancelRun context.CancelFunc
	// hurry is closed when Stop's ctx ends: stopping processes get SIGKILL
	// without waiting out StopGrace.
	hurry     chan struct{}
	hurryOnce sync.Once

	// repairCtx bounds repair operations; Stop cancels it first.
	repairCtx    context.Context
	cancelRepair context.CancelFunc

	// supervisors counts instance goroutines, operations repair goroutines,
	// senders report senders. Stop waits for the first two, then cancels
	// runCtx, then waits for the third.
	supervisors sync.WaitGroup
	operations  sync.WaitGroup
	senders     sync.WaitGroup

	mu        sync.Mutex
	instances map[string]*instance
	stopped   bool
}

// New returns a Provider for cfg, with defaults filled in. It panics when cfg
// has no Reporter, no WorkDir outside no-op mode, or a negative duration.
func New(cfg *Config) *Provider {
	c := *cfg
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	c.StopGrace = cmp.Or(c.StopGrace, 5*time.Second)
	c.RestartBackoff = cmp.Or(c.RestartBackoff, time.Second)
	c.RestartBackoffMax = cmp.Or(c.RestartBackoffMax, 30*time.Second)
	c.RestartResetAfter = cmp.Or(c.RestartResetAfter, 10*time.Minute)
	c.ReportBackoff = cmp.Or(c.ReportBackoff, 500*time.Millisecond)
	c.ReportBackoffMax = max(cmp.Or(c.ReportBackoffMax, 30*time.Second), c.ReportBackoff)
	c.ReportFlushTimeout = cmp.Or(c.ReportFlushTimeout, 10*time.Second)
	c.ReportTimeout = cmp.Or(c.ReportTimeout, 10*time.Second)
	c.RepairSettle = cmp.Or(c.RepairSettle, time.Second)
	c.WatchInterval = cmp.Or(c.WatchInterval, 100*time.Millisecond)
	if c.Now == nil {
		c.Now = time.Now
	}
	if len(c.AllowCommands) == 0 {
		c.AllowCommands = DefaultAllowCommands
	}
	switch {
	case c.Reporter == nil:
		panic("processprovider: Config.Reporter is required")
	case c.WorkDir == "" && !c.NoOp:
		panic("processprovider: Config.WorkDir is required unless NoOp")
	case c.StopGrace < 0 || c.RestartBackoff < 0 || c.RestartBackoffMax < 0 || c.RestartResetAfter < 0 ||
		c.ReportBackoff < 0 || c.ReportBackoffMax < 0 || c.ReportTimeout < 0 || c.ReportFlushTimeout < 0 || c.ReportAttempts < 0 || c.RepairSettle < 0 || c.WatchInterval < 0:
		panic("processprovider: Config durations and counts must not be negative")
	}
	runCtx, cancel := context.WithCancel(context.Background())
	repairCtx, cancelRepair := context.WithCancel(runCtx)
	return &Provider{
		cfg:          c,
		logger:       c.Logger.With("component", "processprovider"),
		runCtx:       runCtx,
		cancelRun:    cancel,
		repairCtx:    repairCtx,
		cancelRepair: cancelRepair,
		hurry:        make(chan struct{}),
		instances:    make(map[string]*instance),
	}
}

var _ provider.Provider = (*Provider)(nil)

// Create starts supervising a process for req and returns at once with status
// PROVISIONING; RUNNING (or FAILED, if the command cannot be started) follows
// as a report. It is idempotent by InstanceID: an id it holds returns that
// instance as it is now and starts nothing, whatever the spec. It returns a
// [*RequestError] (HTTP 400) for an unusable instance id or spec, and
// [ErrStopped] after Stop. Before it answers, the instance is recorded in
// WorkDir/.state (see Restore); an error writing it is returned and starts
// nothing. It does not block on the process or on reports.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) (provider.Instance, error) {
	p.mu.Lock()
	stopped, held := p.stopped, p.instances[req.InstanceID]
	p.mu.Unlock()
	switch {
	case stopped:
		return provider.Instance{}, ErrStopped
	case held != nil:
		return held.snapshot(), nil
	}
	if err := checkInstanceID(req.InstanceID); err != nil {
		return provider.Instance{}, err
	}
	s, err := p.readSpec(ctx, req.InstanceID, req.Spec)
	if err != nil {
		return provider.Instance{}, err
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return provider.Instance{}, ErrStopped
	}
	if in, ok := p.instances[req.InstanceID]; ok {
		return in.snapshot(), nil // a concurrent Create won
	}
	var dir string
	if !p.cfg.NoOp {
		dir = filepath.Join(p.cfg.WorkDir, req.InstanceID)
	}
	in := newInstance(req.InstanceID, s, dir, req.Metadata)
	if !p.cfg.NoOp {
		if err := p.writeRecord(in.toRecordLocked(p.cfg.Now())); err != nil {
			return provider.Instance{}, fmt.Errorf("processprovider: record instance %s: %w", in.id, err)
		}
	}
	p.instances[in.id] = in
	answer := in.snapshot()
	if p.cfg.NoOp {
		// Under p.mu, so Stop cannot be waiting on senders yet.
		p.setStatus(in, provider.StatusRunning, "no-op: nothing started")
	} else {
		p.supervisors.Go(func() { p.supervise(in, nil) })
	}
	p.logger.InfoContext(ctx, "instance created", "instance_id", in.id, "noop", p.cfg.NoOp)
	return answer, nil
}

// Get returns the instance's current status and message, or
// [provider.ErrNotFound] for an id it does not hold (never created, or
// deleted). It does not block.
func (p *Provider) Get(_ context.Context, instanceID string) (provider.Instance, error) {
	p.mu.Lock()
	in, ok := p.instances[instanceID]
	p.mu.Unlock()
	if !ok {
		return provider.Instance{}, provider.ErrNotFound
	}
	return in.snapshot(), nil
}

// Delete starts stopping the instance's process group (SIGTERM, then SIGKILL
// after StopGrace) and returns at once with status DELETING; DELETED follows
// as a report once the process is gone, and the instance is forgotten before
// that report is sent. Deleting an instance that is already DELETING returns
// it unchanged. The delete is recorded before Delete answers: a provider
// that adopts the instance later finishes it. It returns
// [provider.ErrNotFound] for an id it does not hold,
// including one already deleted, and [ErrStopped] after Stop.
func (p *Provider) Delete(ctx context.Context, instanceID string) (provider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return provider.Instance{}, ErrStopped
	}
	in, ok := p.instances[instanceID]
	if !ok {
		return provider.Instance{}, provider.ErrNotFound
	}
	p.requestDelete(in)
	answer := in.snapshot()
	if p.cfg.NoOp {
		// Nothing to stop: gone now. Under p.mu, as in Create.
		delete(p.instances, in.id)
		p.setStatus(in, provider.StatusDeleted, "deleted")
	}
	p.logger.InfoContext(ctx, "instance deleting", "instance_id", instanceID)
	return answer, nil
}

// Health returns nil when the provider can start processes, and an error
// when WorkDir cannot be created or written (or [ErrStopped] after Stop).
// In no-op mode only Stop makes it fail.
func (p *Provider) Health(context.Context) error {
	p.mu.Lock()
	stopped := p.stopped
	p.mu.Unlock()
	if stopped {
		return ErrStopped
	}
	if p.cfg.NoOp {
		return nil
	}
	if err := os.MkdirAll(p.cfg.WorkDir, 0o750); err != nil {
		return fmt.Errorf("create work dir: %w", err)
	}
	f, err := os.CreateTemp(p.cfg.WorkDir, ".health-*")
	if err != nil {
		return fmt.Errorf("write to work dir: %w", err)
	}
	name := f.Name()
	err = f.Close()
	if rmErr := os.Remove(name); err == nil {
		err = rmErr
	}
	if err != nil {
		return fmt.Errorf("write to work dir: %w", err)
	}
	return nil
}

// PID returns the process id of the running process of an instance
// without spec.members, and false when the instance is unknown, has
// members (see [Provider.MemberPID]) or has no process right now (not yet
// started, waiting to restart, failed, or in no-op mode). The process is
// the leader of its own session and process group, whose ids are the same
// number.
func (p *Provider) PID(instanceID string) (int, bool) {
	in := p.instance(instanceID)
	if in == nil {
		return 0, false
	}
	in.mu.Lock()
	has := in.hasMembersLocked()
	in.mu.Unlock()
	if has {
		return 0, false
	}
	pid := in.memberPID(implicitMemberID)
	return pid, pid != 0
}

// MemberPID returns the process id of the running process of one member of
// the instance, as PID does for an instance; an instance without
// spec.members has the one member "main". It returns false when the
// instance or member is unknown or the member has no process right now.
func (p *Provider) MemberPID(instanceID, memberID string) (int, bool) {
	in := p.instance(instanceID)
	if in == nil {
		return 0, false
	}
	pid := in.memberPID(memberID)
	return pid, pid != 0
}

// instance returns the instance with id, nil when it holds none.
func (p *Provider) instance(id string) *instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.instances[id]
}

// Stop ends running repair operations (each fails, reporting why) and
// stops supervising: every process keeps running, nothing is reported for
// it, and its instance's record (written at every change) lets a provider
// started later on the same WorkDir adopt it (see Restore). Only an
// instance being deleted has its processes stopped (SIGTERM, then SIGKILL
// after StopGrace) and its DELETED reported. Stop waits until every
// goroutine of the provider has ended. Reports not yet delivered are
// tried for up to ReportFlushTimeout, then abandoned (logged). If ctx ends
// first, stopping processes get SIGKILL at once and pending reports are
// abandoned; Stop still waits for them and then returns ctx's error. Stop is idempotent;
// after it, Create, Update, Delete, Repair, Restore and Health return
// [ErrStopped], while Get still answers. In no-op mode it reports nothing.
func (p *Provider) Stop(ctx context.Context) error {
	p.mu.Lock()
	p.stopped = true
	instances := make([]*instance, 0, len(p.instances))
	for _, in := range p.instances {
		instances = append(instances, in)
	}
	p.mu.Unlock()
	p.cancelRepair()
	for _, in := range instances {
		in.requestStop()
	}
	hurry := func() { p.hurryOnce.Do(func() { close(p.hurry) }) }
	err := waitOrElse(ctx, &p.supervisors, hurry)
	err = cmp.Or(err, waitOrElse(ctx, &p.operations, hurry))
	// Supervisors and operations have ended, so no sender can be added any
	// more. Reports still unsent get ReportFlushTimeout, not forever: a
	// Steward that is away must not hold the provider's shutdown.
	flushCtx, cancelFlush := context.WithTimeout(ctx, p.cfg.ReportFlushTimeout)
	defer cancelFlush()
	if werr := waitOrElse(flushCtx, &p.senders, p.cancelRun); ctx.Err() != nil {
		err = cmp.Or(err, werr)
	}
	p.cancelRun()
	return err
}

// waitOrElse waits for wg. If ctx ends first it calls hurry, still waits,
// and returns ctx's error.
func waitOrElse(ctx context.Context, wg *sync.WaitGroup, hurry func()) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		hurry()
		<-done
		return ctx.Err()
	}
}

// forget drops the instance, so Get and Delete answer ErrNotFound and a new
// Create with its id starts afresh.
func (p *Provider) forget(in *instance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.instances[in.id] == in {
		delete(p.instances, in.id)
	}
}

// setStatus records the instance's status and message and, when the status
// changed, queues a report observed now (see recordLocked).
func (p *Provider) setStatus(in *instance, s provider.Status, msg string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	p.recordLocked(in, s, msg)
}

// recordLocked records the status and message and, when either (or the
// restart count) changed, queues a report observed now: a restart of a
// RUNNING instance is reported with its new message (the new pid) and
// restart count. The caller holds in.mu, so reports are queued in the
// order the statuses were set, and an update's PROVISIONING cannot be
// overtaken by the old process's RUNNING. DELETING is not reported:
// Steward set it itself when it called Delete.
func (p *Provider) recordLocked(in *instance, s provider.Status, msg string) {
	before, restarts := in.message, in.restartsLocked()
	statusChanged := in.setLocked(s, msg)
	changed := statusChanged || (in.status == s && (msg != before || restarts != in.reportedRestarts))
	if !changed || s == provider.StatusDeleting || in.restoring {
		return
	}
	in.reportedRestarts = restarts
	p.enqueue(in.out, provider.StatusReport{
		InstanceID:   in.id,
		Status:       s,
		Message:      msg,
		ObservedTime: p.cfg.Now(),
		RestartCount: &restarts,
	})
	if statusChanged && s == provider.StatusRunning {
		// Running again (first, or after an update): report the runtime
		// even when it looks as it did before.
		p.runtimeChangedLocked(in, true)
	}
}

// readSpec parses a create or update request's spec for instance id, and
// logs the fields it ignores.
func (p *Provider) readSpec(ctx context.Context, id string, raw map[string]any) (spec, error) {
	s, ignored, err := parseSpec(raw, !p.cfg.NoOp)
	if err != nil {
		return spec{}, err
	}
	if err := allowed(s, p.cfg.AllowCommands, p.cfg.NoOp); err != nil {
		return spec{}, err
	}
	if len(ignored) > 0 {
		p.logger.DebugContext(ctx, "spec fields ignored", "instance_id", id, "fields", ignored)
	}
	return s, nil
}
