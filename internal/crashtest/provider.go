package crashtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// HeldInstance is what the trial's provider knows of one instance id: every
// create and delete Steward sent for it, and whether it holds it now.
type HeldInstance struct {
	ID string
	// OrderID is the order the create's metadata named ("" when only a
	// delete arrived).
	OrderID string
	// Held is true while the provider holds the instance: created, and not
	// deleted since.
	Held bool
	// Creates and Deletes count the calls received, replays included.
	Creates, Deletes int
	// Realisations counts the times the instance was made: more than one
	// means it was created again after a deletion.
	Realisations int
	// FirstCreate and LastDelete are when they arrived, since the trial
	// started (0: never).
	FirstCreate, LastDelete time.Duration
	// Status is the provider's status of the instance.
	Status provider.Status
	// ReportError is the last failed status report about it ("" when the
	// last one was taken).
	ReportError string
	// Data is what the instance holds: "data-of:<order>:<instance>" when a
	// create without a source made it, else what it copied (CopiedFrom: the
	// instance it copied from). ReadOnly is set while an export of it is
	// begun and not ended.
	Data       string
	CopiedFrom string
	ReadOnly   bool
	// CopyFailed is set when the provider failed its copy.
	CopyFailed bool
}

// memProvider is the trial's provider: an in-memory [provider.Provider]
// that records every call, answers a create in a few milliseconds and
// reports RUNNING, and DELETED after a delete, a few milliseconds later. It
// creates an instance at once, before it answers, so an instance exists
// even when Steward dies before it reads the answer. It is safe for
// concurrent use.
type memProvider struct {
	start    time.Time
	reporter provider.StatusReporter
	// runCtx bounds the status reports; cancel ends them at close.
	runCtx context.Context
	cancel context.CancelFunc
	// reports tracks the goroutines sending reports.
	reports sync.WaitGroup

	mu        sync.Mutex
	instances map[string]*HeldInstance
	// rotations counts the credential rotations done, by operation id.
	rotations map[string]int
	// lastRotation is each instance's last rotation's operation id: the
	// one a repeated request answers again without rotating.
	lastRotation map[string]string
}

func newMemProvider(stewardURLs []string, start time.Time) *memProvider {
	ctx, cancel := context.WithCancel(context.Background())
	return &memProvider{
		start: start,
		// One attempt per call: report retries every failure itself,
		// a 404 from a Steward that lost the instance included.
		reporter: &provider.HTTPReporter{StewardURLs: stewardURLs, Timeout: 2 * time.Second,
			HTTPClient: &http.Client{Transport: newTransport()},
			Retry:      provider.RetryPolicy{MaxAttempts: 1}},
		runCtx: ctx, cancel: cancel,
		instances: make(map[string]*HeldInstance), rotations: map[string]int{}, lastRotation: map[string]string{},
	}
}

// BeginExport makes a held instance read-only.
func (m *memProvider) BeginExport(_ context.Context, id string) error {
	return m.setReadOnly(id, true)
}

// EndExport makes a held instance writable again.
func (m *memProvider) EndExport(_ context.Context, id string) error {
	return m.setReadOnly(id, false)
}

func (m *memProvider) setReadOnly(id string, readOnly bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	in, ok := m.instances[id]
	if !ok || !in.Held {
		return provider.ErrNotFound
	}
	in.ReadOnly = readOnly
	return nil
}

// Export writes a held instance's data.
func (m *memProvider) Export(_ context.Context, id string, w io.Writer) error {
	m.mu.Lock()
	in, ok := m.instances[id]
	if !ok || !in.Held {
		m.mu.Unlock()
		return provider.ErrNotFound
	}
	data := in.Data
	m.mu.Unlock()
	_, err := io.WriteString(w, data)
	return err
}

// copyFrom fills realisation gen of id from src's export after 5–30 ms,
// and reports it RUNNING; one copy in five fails (FAILED), so that failed
// copies meet kills too.
func (m *memProvider) copyFrom(id string, gen int, src provider.ExportSource) {
	if pause(m.runCtx, jitter(5, 30)) != nil {
		return
	}
	data, err := func() ([]byte, error) {
		body, err := provider.OpenExport(m.runCtx, &http.Client{Transport: newTransport(), Timeout: 5 * time.Second}, src)
		if err != nil {
			return nil, err
		}
		defer body.Close()
		return io.ReadAll(body)
	}()
	if err == nil && rand.IntN(5) == 0 {
		err = errors.New("the copy broke off (made to fail)")
	}
	status, message := provider.StatusRunning, ""
	m.mu.Lock()
	in := m.instances[id]
	current := in.Held && in.Realisations == gen
	if current {
		if err != nil {
			status, message = provider.StatusFailed, err.Error()
			in.CopyFailed = true
		} else {
			in.Data = string(data)
		}
		in.Status = status
	}
	m.mu.Unlock()
	if current {
		m.report(provider.StatusReport{InstanceID: id, Status: status, Message: message, ObservedTime: time.Now().UTC()})
	}
}

// Credentials answers a held instance's (fixed) credentials.
func (m *memProvider) Credentials(_ context.Context, id string) (provider.Credentials, error) {
	if _, err := m.Get(context.Background(), id); err != nil {
		return provider.Credentials{}, err
	}
	return provider.Credentials{Username: "crash", Password: "pw"}, nil
}

// RotateCredentials rotates a held instance's credentials once per
// operation id, as a provider must: the request of its last rotation again
// changes nothing. It answers after 1–3 ms, so a kill may come between the
// rotation and Steward reading the answer.
func (m *memProvider) RotateCredentials(ctx context.Context, req provider.RotateRequest) (provider.Rotated, error) {
	m.mu.Lock()
	h, ok := m.instances[req.InstanceID]
	if !ok || !h.Held {
		m.mu.Unlock()
		return provider.Rotated{}, provider.ErrNotFound
	}
	if m.lastRotation[req.InstanceID] != req.OperationID {
		m.rotations[req.OperationID]++
		m.lastRotation[req.InstanceID] = req.OperationID
	}
	m.mu.Unlock()
	if err := pause(ctx, jitter(1, 3)); err != nil {
		return provider.Rotated{}, err
	}
	return provider.Rotated{RotateTime: time.Now().UTC()}, nil
}

// rotationCounts copies the rotations done, by operation id.
func (m *memProvider) rotationCounts() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.rotations)
}

// Create makes the instance (or returns it as it is when it is held), and
// answers after 1–3 ms.
func (m *memProvider) Create(ctx context.Context, req provider.CreateRequest) (provider.Instance, error) {
	m.mu.Lock()
	in := m.instance(req.InstanceID)
	in.Creates++
	if in.OrderID == "" {
		in.OrderID = req.Metadata.OrderID
	}
	if in.Held {
		inst := provider.Instance{InstanceID: in.ID, Status: in.Status}
		m.mu.Unlock()
		return inst, nil
	}
	in.Held, in.Status = true, provider.StatusProvisioning
	in.Realisations++
	if in.FirstCreate == 0 {
		in.FirstCreate = time.Since(m.start)
	}
	gen := in.Realisations
	if req.Source == nil {
		in.Data = "data-of:" + in.OrderID + ":" + in.ID
	} else {
		in.CopiedFrom = req.Source.InstanceID
	}
	m.mu.Unlock()
	if req.Source != nil {
		src := *req.Source
		m.reports.Go(func() { m.copyFrom(req.InstanceID, gen, src) })
	} else {
		m.later(req.InstanceID, gen, provider.StatusRunning, time.Now().Add(jitter(2, 5)))
	}
	if err := pause(ctx, jitter(1, 3)); err != nil {
		return provider.Instance{}, err // Steward is gone; the instance stays
	}
	return provider.Instance{InstanceID: req.InstanceID, Status: provider.StatusProvisioning}, nil
}

// Get returns a held instance, else [provider.ErrNotFound].
func (m *memProvider) Get(_ context.Context, id string) (provider.Instance, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	in, ok := m.instances[id]
	if !ok || !in.Held {
		return provider.Instance{}, provider.ErrNotFound
	}
	return provider.Instance{InstanceID: id, Status: in.Status}, nil
}

// Delete lets go of a held instance at once, answers DELETING and reports
// DELETED a few milliseconds later; an instance it does not hold is
// [provider.ErrNotFound].
func (m *memProvider) Delete(_ context.Context, id string) (provider.Instance, error) {
	m.mu.Lock()
	in := m.instance(id)
	in.Deletes++
	in.LastDelete = time.Since(m.start)
	if !in.Held {
		m.mu.Unlock()
		return provider.Instance{}, provider.ErrNotFound
	}
	in.Held, in.Status = false, provider.StatusDeleting
	gen := in.Realisations
	m.mu.Unlock()
	m.later(id, gen, provider.StatusDeleted, time.Now().Add(jitter(2, 5)))
	return provider.Instance{InstanceID: id, Status: provider.StatusDeleting}, nil
}

// Health always answers healthy: the provider never fails in this test.
func (m *memProvider) Health(context.Context) error { return nil }

// snapshot copies every instance record, by id.
func (m *memProvider) snapshot() map[string]HeldInstance {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]HeldInstance, len(m.instances))
	for id, in := range m.instances {
		out[id] = *in
	}
	return out
}

// counts returns the creates and deletes received.
func (m *memProvider) counts() (creates, deletes int) {
	for in := range maps.Values(m.snapshot()) {
		creates += in.Creates
		deletes += in.Deletes
	}
	return creates, deletes
}

// instance returns id's record, made empty if new; m.mu is held.
func (m *memProvider) instance(id string) *HeldInstance {
	in, ok := m.instances[id]
	if !ok {
		in = &HeldInstance{ID: id, Status: provider.StatusUnknown}
		m.instances[id] = in
	}
	return in
}

// later reports status for realisation gen of id at at (the report's
// observed time), as the provider's backend would once it has acted. A
// RUNNING for a realisation since deleted is not sent.
func (m *memProvider) later(id string, gen int, status provider.Status, at time.Time) {
	m.reports.Go(func() {
		if pause(m.runCtx, time.Until(at)) != nil {
			return
		}
		if status == provider.StatusRunning {
			m.mu.Lock()
			in := m.instances[id]
			current := in.Held && in.Realisations == gen
			if current {
				in.Status = status
			}
			m.mu.Unlock()
			if !current {
				return
			}
		} else {
			m.mu.Lock()
			if in := m.instances[id]; !in.Held {
				in.Status = status
			}
			m.mu.Unlock()
		}
		m.report(provider.StatusReport{InstanceID: id, Status: status, ObservedTime: at.UTC()})
	})
}

// report sends r until Steward takes it or the provider closes: a server
// being killed and restarted refuses connections for a moment, and a
// robust provider keeps its report until it is taken.
func (m *memProvider) report(r provider.StatusReport) {
	for {
		err := m.reporter.Report(m.runCtx, r)
		m.mu.Lock()
		if in := m.instances[r.InstanceID]; in != nil {
			in.ReportError = ""
			if err != nil {
				in.ReportError = fmt.Sprintf("%s report: %v", r.Status, err)
			}
		}
		m.mu.Unlock()
		if err == nil || errors.Is(err, provider.ErrInvalidReport) || pause(m.runCtx, 100*time.Millisecond) != nil {
			return
		}
	}
}

// callToken is the secret the trial's provider registers for Steward to
// present: its credentials routes are served to no one else.
const callToken = "stp_crashtest"

// providerServer serves a memProvider on 127.0.0.1.
type providerServer struct {
	mem    *memProvider
	url    string
	srv    *http.Server
	served chan struct{}
}

func startProvider(stewardURLs []string, start time.Time) (*providerServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("provider: listen: %w", err)
	}
	mem := newMemProvider(stewardURLs, start)
	p := &providerServer{mem: mem, url: "http://" + ln.Addr().String(), served: make(chan struct{}),
		srv: &http.Server{Handler: provider.NewServer(mem, provider.ServerConfig{Token: callToken}), ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(ln) // ErrServerClosed after close
	}()
	return p, nil
}

// close stops the server, so no call starts a report any more, then the
// reports, and waits for both.
func (p *providerServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if p.srv.Shutdown(ctx) != nil {
		_ = p.srv.Close()
	}
	<-p.served
	p.mem.cancel()
	p.mem.reports.Wait()
	if r, ok := p.mem.reporter.(*provider.HTTPReporter); ok {
		r.HTTPClient.CloseIdleConnections()
	}
}

// jitter returns a random duration between lo and hi milliseconds.
func jitter(lo, hi int) time.Duration {
	return time.Duration(lo)*time.Millisecond + rand.N(time.Duration(hi-lo)*time.Millisecond+1)
}

// pause waits d, or returns ctx's error when ctx ends first. It paces the
// load and the provider; it never waits for a condition.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// newTransport returns a transport of the harness's own, so closing its
// idle connections leaves no goroutine behind.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return t
}
