package processprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// stateDirName is the directory under WorkDir that holds one record per
// instance, <instance_id>.json. Instance ids start with a letter or digit,
// so it is never an instance's directory.
const stateDirName = ".state"

// recordVersion is the version of the record format this provider writes
// and reads.
const recordVersion = 1

// record is what the provider keeps of an instance on disk, so that a
// provider started later on the same WorkDir can find its processes again:
// the spec, the order it realises, the status last set, and per member the
// process (pid, start time and boot id, which together name exactly one
// process) and the restart bookkeeping. It is rewritten, atomically, at
// every change.
type record struct {
	Version    int             `json:"version"`
	InstanceID string          `json:"instance_id"`
	Project    string          `json:"project,omitempty"`
	OrderID    string          `json:"order_id,omitempty"`
	Spec       specRecord      `json:"spec"`
	Status     provider.Status `json:"status"`
	Message    string          `json:"message"`
	// Deleting says a delete was accepted: a provider that adopts the
	// instance finishes it rather than restarting anything.
	Deleting bool           `json:"deleting,omitempty"`
	Members  []memberRecord `json:"members"`
	// Stale are the processes of a replaced spec not yet stopped: a
	// provider that adopts the instance stops them.
	Stale   []processRecord `json:"stale,omitempty"`
	Updated time.Time       `json:"updated"`
}

// specRecord is a spec as recorded.
type specRecord struct {
	Argv          []string           `json:"argv"`
	Env           []string           `json:"env,omitempty"`
	RestartPolicy restartPolicy      `json:"restart_policy"`
	MaxRestarts   int                `json:"max_restarts"`
	Members       []memberSpecRecord `json:"members,omitempty"`
}

type memberSpecRecord struct {
	ID   string `json:"id"`
	Role string `json:"role"`
}

// processRecord names one process: its pid, its start time in clock ticks
// after boot (/proc/<pid>/stat field 22) and the boot's id. A pid alone may
// have been given to another process since.
type processRecord struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"start_time"`
	BootID    string `json:"boot_id"`
}

// memberRecord is one member of the current spec as recorded; PID is 0
// when it runs no process (waiting to restart, failed, or not started).
type memberRecord struct {
	ID string `json:"id"`
	processRecord
	StartedAt   time.Time `json:"started_at,omitzero"`
	Started     bool      `json:"started"`
	Failed      bool      `json:"failed"`
	Message     string    `json:"message"`
	Restarts    int       `json:"restarts"`
	Consecutive int       `json:"consecutive"`
	LastExit    string    `json:"last_exit,omitempty"`
}

// stateDir is where the records are.
func (p *Provider) stateDir() string { return filepath.Join(p.cfg.WorkDir, stateDirName) }

// recordPath is the instance's record.
func (p *Provider) recordPath(id string) string { return filepath.Join(p.stateDir(), id+".json") }

// toRecordLocked builds the instance's record; the caller holds in.mu.
func (in *instance) toRecordLocked(now time.Time) record {
	r := record{
		Version: recordVersion, InstanceID: in.id, Project: in.project, OrderID: in.appInstanceID,
		Spec: specRecord{Argv: in.spec.argv, Env: in.spec.env, RestartPolicy: in.spec.policy,
			MaxRestarts: in.spec.maxRestarts},
		Status: in.status, Message: in.message, Deleting: closed(in.deleteCh) || in.status == provider.StatusDeleting,
		Members: make([]memberRecord, len(in.members)), Updated: now.UTC(),
	}
	for _, ms := range in.spec.members {
		r.Spec.Members = append(r.Spec.Members, memberSpecRecord{ID: ms.id, Role: ms.role})
	}
	boot := bootID()
	for i, m := range in.members {
		r.Members[i] = memberRecord{ID: m.id, StartedAt: m.startedAt, Started: m.started, Failed: m.failed,
			Message: m.message, Restarts: m.restarts, Consecutive: m.consecutive, LastExit: m.lastExit}
		if m.pid != 0 {
			r.Members[i].processRecord = processRecord{PID: m.pid, StartTime: m.startTime, BootID: boot}
		}
	}
	for _, m := range in.retired {
		if m.pid != 0 {
			r.Stale = append(r.Stale, processRecord{PID: m.pid, StartTime: m.startTime, BootID: boot})
		}
	}
	return r
}

// saveLocked writes the instance's record, logging a failure (the
// processes run on; only a restart of the provider would lose track of
// them). The caller holds in.mu, so records are written in the order of
// the changes they record. In no-op mode, and once the record is removed,
// it does nothing.
func (p *Provider) saveLocked(in *instance) {
	if p.cfg.NoOp || in.removed {
		return
	}
	if err := p.writeRecord(in.toRecordLocked(p.cfg.Now())); err != nil {
		p.logger.Error("instance record not written: a provider started later may not find its processes",
			"instance_id", in.id, "error", err)
	}
}

// writeRecord writes r atomically: a temporary file, synced, renamed over
// the record, and the directory synced, so a crash leaves the old record or
// the new, never a part. The records may hold the spec's environment, so
// only the provider's user may read them.
func (p *Provider) writeRecord(r record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	dir := p.stateDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+r.InstanceID+".json-*")
	if err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	err = errors.Join(err, f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), p.recordPath(r.InstanceID))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write record: %w", err)
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// removeRecord deletes the instance's record for good: its processes are
// gone. No later change writes it again.
func (p *Provider) removeRecord(in *instance) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.removed = true
	if p.cfg.NoOp {
		return
	}
	if err := os.Remove(p.recordPath(in.id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		p.logger.Warn("remove instance record", "instance_id", in.id, "error", err)
		return
	}
	if err := syncDir(p.stateDir()); err != nil {
		p.logger.Warn("sync state dir", "error", err)
	}
}

// retiredGone records that the processes of replaced specs are gone.
func (p *Provider) retiredGone(in *instance) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.retired) == 0 {
		return
	}
	in.retired = nil
	p.saveLocked(in)
}

// restoring is what a supervisor takes over from a record.
type restoring struct {
	// resumes says, by member id, how each member's run takes over.
	resumes map[string]*resume
	// stale are live processes of a replaced spec, to stop first.
	stale []*process
}

// Restore takes over the instances an earlier provider recorded in WorkDir
// (a provider that stopped, or whose process died): it must be called
// before the provider serves requests. Each member's recorded process that
// still runs (the same pid with the same start time, in the same boot) is
// adopted and supervised again; one that ended meanwhile is restarted if
// its restart policy says so, its exit counting as a failure unless it was
// this OS process's child (see the package doc, Restart policy). An
// instance whose delete was accepted is deleted now. Each instance's status
// is then reported (a runtime report too, with members), so Steward sees
// what runs. A record that cannot be read is logged and left alone. It
// returns how many instances it took over; its error says the state
// directory could not be read, or [ErrStopped] after Stop. In no-op mode it
// does nothing.
func (p *Provider) Restore(ctx context.Context) (int, error) {
	if p.cfg.NoOp {
		return 0, nil
	}
	entries, err := os.ReadDir(p.stateDir())
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("processprovider: read state dir: %w", err)
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			if strings.HasPrefix(name, ".") && !e.IsDir() {
				_ = os.Remove(filepath.Join(p.stateDir(), name)) // a temporary file of an interrupted write
			}
			continue
		}
		in, r, err := p.loadRecord(strings.TrimSuffix(name, ".json"))
		if err != nil {
			p.logger.ErrorContext(ctx, "instance record not restored", "file", filepath.Join(p.stateDir(), name), "error", err)
			continue
		}
		p.mu.Lock()
		switch {
		case p.stopped:
			p.mu.Unlock()
			return n, ErrStopped
		case p.instances[in.id] != nil:
			p.mu.Unlock()
			continue
		}
		p.logger.InfoContext(ctx, "restoring instance", "instance_id", in.id, "recorded_status", string(in.status))
		p.instances[in.id] = in
		p.supervisors.Go(func() { p.supervise(in, r) })
		p.mu.Unlock()
		n++
	}
	return n, nil
}

// loadRecord reads instance id's record and builds the instance, and what
// its supervisor takes over, from it.
func (p *Provider) loadRecord(id string) (*instance, *restoring, error) {
	data, err := os.ReadFile(p.recordPath(id))
	if err != nil {
		return nil, nil, err
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, nil, fmt.Errorf("decode: %w", err)
	}
	s, err := r.spec()
	switch {
	case r.Version != recordVersion:
		return nil, nil, fmt.Errorf("record version %d, want %d", r.Version, recordVersion)
	case r.InstanceID != id:
		return nil, nil, fmt.Errorf("record of instance %q in the file of %q", r.InstanceID, id)
	case checkInstanceID(id) != nil:
		return nil, nil, fmt.Errorf("unusable instance id %q", id)
	case err != nil:
		return nil, nil, err
	}
	in := newInstance(id, s, filepath.Join(p.cfg.WorkDir, id), provider.CreateMetadata{Project: r.Project, OrderID: r.OrderID})
	in.status, in.message, in.restoring = r.Status, r.Message, true
	if r.Deleting {
		in.status, in.message = provider.StatusDeleting, "stopping"
		in.deleteOnce.Do(func() { close(in.deleteCh) })
	}
	byID := map[string]memberRecord{}
	for _, mr := range r.Members {
		byID[mr.ID] = mr
	}
	rs := &restoring{resumes: map[string]*resume{}}
	for _, m := range in.members {
		mr, ok := byID[m.id]
		if !ok {
			return nil, nil, fmt.Errorf("member %q of the spec is not recorded", m.id)
		}
		m.started, m.failed, m.message = mr.Started, mr.Failed, mr.Message
		m.restarts, m.consecutive, m.lastExit, m.startedAt = mr.Restarts, mr.Consecutive, mr.LastExit, mr.StartedAt
		rs.resumes[m.id] = resumeOf(mr, r.Deleting)
	}
	for _, pr := range r.Stale {
		if proc, _, gone := find(pr.PID, pr.StartTime, pr.BootID); !gone {
			rs.stale = append(rs.stale, proc)
		}
	}
	return in, rs, nil
}

// resumeOf says how a member's run takes over from its record.
func resumeOf(mr memberRecord, deleting bool) *resume {
	switch {
	case mr.Failed:
		return &resume{idle: true}
	case mr.PID == 0:
		// Waiting to restart, or not started yet: start it, unless the
		// instance is being deleted.
		return &resume{idle: deleting}
	}
	proc, e, gone := find(mr.PID, mr.StartTime, mr.BootID)
	switch {
	case !gone:
		return &resume{proc: proc}
	case deleting:
		return &resume{idle: true}
	}
	return &resume{gone: &e}
}

// spec rebuilds the recorded spec, checking what a spec needs to run.
func (r record) spec() (spec, error) {
	s := spec{argv: slices.Clone(r.Spec.Argv), env: slices.Clone(r.Spec.Env), policy: r.Spec.RestartPolicy,
		maxRestarts: r.Spec.MaxRestarts}
	switch s.policy {
	case restartAlways, restartOnFailure, restartNever:
	default:
		return spec{}, fmt.Errorf("recorded restart policy %q", s.policy)
	}
	if len(s.argv) == 0 || s.argv[0] == "" {
		return spec{}, errors.New("recorded spec has no command")
	}
	for _, ms := range r.Spec.Members {
		if !memberIDPattern.MatchString(ms.ID) {
			return spec{}, fmt.Errorf("recorded member id %q", ms.ID)
		}
		s.members = append(s.members, memberSpec{id: ms.ID, role: ms.Role})
	}
	return s, nil
}

// reportRestored reports the status of an instance a supervisor has just
// taken over, once, whether it changed or not, and with members its
// runtime: Steward last heard from an earlier provider.
func (p *Provider) reportRestored(in *instance) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.restoring = false
	if in.status == provider.StatusDeleting || in.status == provider.StatusDeleted {
		return
	}
	restarts := in.restartsLocked()
	in.reportedRestarts = restarts
	p.enqueue(in.out, provider.StatusReport{InstanceID: in.id, Status: in.status, Message: in.message,
		ObservedTime: p.cfg.Now(), RestartCount: &restarts})
	p.runtimeChangedLocked(in, true)
}
