package crashtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/stewardhq/steward/pkg/provider"
)

// The catalog item the clients order, and the provider that realises it.
const (
	catalogItemID = "crash"
	providerName  = "crash-sp"
)

// Config configures one trial. Binary and Dir are required; a zero field
// means its default.
type Config struct {
	// Binary is the steward binary to run (built without -race). Required.
	Binary string
	// Dir holds the trial's files: the data dir (SQLite and the embedded
	// NATS store) and the server log, steward.log. It is created if
	// missing and left in place. Required.
	Dir string
	// DatabaseURL, when set, names a PostgreSQL server: the trial creates a
	// schema of its own there, runs Steward on it and drops it at the end.
	// Defaults to SQLite in Dir.
	DatabaseURL string
	// Replicas, above 1, runs that many `steward server` processes on one
	// PostgreSQL (DatabaseURL is then required), each client sending to
	// its own and moving on to the next when it gets no answer; the trial
	// then follows the cluster plan (see disrupt) instead of Kills.
	Replicas int
	// NATSServer, with Replicas, is a nats-server binary ([BuildNATSServer]):
	// the replicas share a three-node JetStream cluster of it, Steward's
	// stream on three replicas.
	NATSServer string
	// Kubeconfig, with Replicas, names a Kubernetes cluster: the trial then
	// runs `steward adapter` with AdapterConfig (the cluster-namespace
	// example) against it, and one order in sixteen is of a type that
	// requires that adapter (see adapter.go).
	Kubeconfig, AdapterConfig string
	// Orders, with Replicas, is how many creates the clients send; the load
	// stops then. Defaults to 2,000.
	Orders int
	// Clients is the number of client goroutines. Defaults to 4.
	Clients int
	// Kills is the number of SIGKILLs. Defaults to 3.
	Kills int
	// Terminate stops the server with SIGTERM instead of SIGKILL: a
	// graceful stop (its drain delay is DrainDelay), which must turn
	// /readyz to 503 first and exit 0 within StopTimeout.
	Terminate bool
	// DrainDelay is the server's --drain-delay with Terminate. Defaults to 1s.
	DrainDelay time.Duration
	// StopTimeout bounds a SIGTERM's graceful stop. Defaults to 15s.
	StopTimeout time.Duration
	// KillDelayMin and KillDelayMax bound the random time from the start of
	// the load, and then from each restart, to the next kill. Default to
	// 200ms and 1.5s.
	KillDelayMin, KillDelayMax time.Duration
	// Tail is how long the load goes on after the last restart. Defaults
	// to 1s.
	Tail time.Duration
	// OpInterval is a client's mean pause between two requests. Defaults
	// to 40ms.
	OpInterval time.Duration
	// SettleTimeout is how long, once the load stops, the invariants may
	// take to hold (and clients to get their final answers). Defaults to
	// 30s.
	SettleTimeout time.Duration
	// StartTimeout bounds each start of the server, until its health
	// answers 200. Defaults to 20s.
	StartTimeout time.Duration
	// Seed seeds the clients' and the kills' random choices. Defaults to a
	// random seed (in the report).
	Seed uint64
	// Logger hears the trial's progress (Info). Defaults to discarding.
	Logger *slog.Logger
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Binary == "" || cfg.Dir == "" {
		return cfg, errors.New("crashtest: Config.Binary and Config.Dir are required")
	}
	cfg.Replicas = cmp.Or(cfg.Replicas, 1)
	if cfg.Replicas > 1 && (cfg.DatabaseURL == "" || cfg.NATSServer == "") {
		return cfg, errors.New("crashtest: several replicas need Config.DatabaseURL and Config.NATSServer")
	}
	if cfg.Kubeconfig != "" && (cfg.Replicas < 2 || cfg.AdapterConfig == "") {
		return cfg, errors.New("crashtest: an adapter runs in a cluster trial (Config.Replicas), with Config.AdapterConfig")
	}
	cfg.Orders = cmp.Or(cfg.Orders, 2000)
	cfg.Clients = cmp.Or(cfg.Clients, 4)
	cfg.Kills = cmp.Or(cfg.Kills, 3)
	cfg.KillDelayMin = cmp.Or(cfg.KillDelayMin, 200*time.Millisecond)
	cfg.KillDelayMax = max(cmp.Or(cfg.KillDelayMax, 1500*time.Millisecond), cfg.KillDelayMin)
	cfg.Tail = cmp.Or(cfg.Tail, time.Second)
	cfg.DrainDelay = cmp.Or(cfg.DrainDelay, time.Second)
	cfg.StopTimeout = cmp.Or(cfg.StopTimeout, 15*time.Second)
	cfg.OpInterval = cmp.Or(cfg.OpInterval, 40*time.Millisecond)
	cfg.SettleTimeout = cmp.Or(cfg.SettleTimeout, 30*time.Second)
	cfg.StartTimeout = cmp.Or(cfg.StartTimeout, 20*time.Second)
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}

// Run runs one trial (see the package comment) and reports it. It returns
// an error only when the trial could not be run: the binary does not start
// at all, the provider cannot register, ctx ends. What Steward gets wrong,
// a failed restart included, is in the report's violations. Every process
// it starts is stopped, and the PostgreSQL schema dropped, before it returns.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Report{}, err
	}
	t := &trial{cfg: cfg, start: time.Now(), rng: rand.New(rand.NewPCG(cfg.Seed, 0)),
		log: cfg.Logger.With("component", "crashtest")}
	t.tag = fmt.Sprintf("k%x", cfg.Seed&0xffffff)
	rep := Report{Store: "sqlite", Seed: cfg.Seed, Started: t.start, Dir: cfg.Dir,
		LogPath: filepath.Join(cfg.Dir, "steward.log")}
	if cfg.DatabaseURL != "" {
		rep.Store = "postgres"
	}
	err = t.run(ctx, &rep)
	rep.Duration = time.Since(t.start)
	rep.Pass = err == nil && len(rep.Violations) == 0
	return rep, err
}

// trial is one run of Run.
type trial struct {
	cfg   Config
	log   *slog.Logger
	start time.Time
	// tag starts every Idempotency-Key of the trial.
	tag string
	// rng draws the kill delays; each client has its own.
	rng *rand.Rand
	// srvs are the replicas; srv is the first, the only one outside a
	// cluster trial.
	srvs []*serverProc
	srv  *serverProc
	api  *api
	prov *providerServer
	// nats is the NATS cluster of a cluster trial, and db, nc and js the
	// trial's own connections to it and to the replicas' database.
	nats *natsCluster
	db   *pgxpool.Pool
	nc   *nats.Conn
	js   jetstream.JetStream
	// creates counts the creates the clients sent.
	creates atomic.Int64
	// adapter runs with Config.Kubeconfig (nil otherwise).
	adapter *serverProc

	clients []*client
	// clientsDone is closed once every client has returned.
	clientsDone chan struct{}

	inFlight, noAnswer, inUse atomic.Int64

	mu sync.Mutex
	// lastKill is the last kill, restartAt the restart after it, and
	// firstSuccess the first 2xx after that.
	lastKill, restartAt, firstSuccess time.Time
}

func (t *trial) run(ctx context.Context, rep *Report) error {
	var dbURL string
	if t.cfg.DatabaseURL != "" {
		u, drop, err := newSchema(ctx, t.cfg.DatabaseURL)
		if err != nil {
			return fmt.Errorf("crashtest: %w", err)
		}
		defer drop() // last: after the servers have stopped
		dbURL = u
	}
	var extra []string
	if t.cfg.Terminate || t.cfg.Replicas > 1 {
		extra = append(extra, "--drain-delay", t.cfg.DrainDelay.String())
	}
	if t.cfg.Replicas > 1 {
		var err error
		if t.nats, err = startNATSCluster(ctx, t.cfg.NATSServer, filepath.Join(t.cfg.Dir, "nats"), 3, t.cfg.StartTimeout); err != nil {
			return fmt.Errorf("crashtest: %w", err)
		}
		defer t.nats.stop() // after the servers
		rep.NATSLogs = t.nats.logs()
		closeConns, err := t.connectCluster(ctx, dbURL)
		if err != nil {
			return fmt.Errorf("crashtest: %w", err)
		}
		defer closeConns()
		// The sentinel's cycles often, so that an adapted order's events
		// follow its changes closely. Its debounce (how soon a not-ready
		// order is published again) stays the default: one adapter handles
		// a few events a second here, and a shorter one floods it.
		extra = append(extra, "--nats-url", t.nats.url(), "--nats-stream-replicas", "3",
			"--sentinel-interval", "250ms")
	}
	var bases []string
	for i := range t.cfg.Replicas {
		dataDir := filepath.Join(t.cfg.Dir, "data")
		logPath := rep.LogPath
		if t.cfg.Replicas > 1 {
			dataDir = filepath.Join(t.cfg.Dir, fmt.Sprintf("data-%d", i+1))
			logPath = filepath.Join(t.cfg.Dir, fmt.Sprintf("steward-%d.log", i+1))
			rep.ReplicaLogs = append(rep.ReplicaLogs, logPath)
		}
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return fmt.Errorf("crashtest: %w", err)
		}
		port, err := FreePort()
		if err != nil {
			return fmt.Errorf("crashtest: %w", err)
		}
		srv := newServerProc(serverParams{bin: t.cfg.Binary, dataDir: dataDir, databaseURL: dbURL, logPath: logPath,
			port: port, extra: extra})
		t.srvs = append(t.srvs, srv)
		bases = append(bases, srv.base)
	}
	t.srv = t.srvs[0]
	var err error
	if t.prov, err = startProvider(bases, t.start); err != nil {
		return fmt.Errorf("crashtest: %w", err)
	}
	defer t.prov.close() // after the servers have stopped: they call the provider
	t.api = newAPI(bases, 10*time.Second)
	defer t.api.close()
	for _, srv := range t.srvs {
		defer srv.stop(2 * time.Second)
		if err := srv.start(); err != nil {
			return fmt.Errorf("crashtest: %w", err)
		}
	}
	for _, srv := range t.srvs {
		if _, err := srv.waitReady(ctx, t.cfg.StartTimeout); err != nil {
			return fmt.Errorf("crashtest: first start: %w", err)
		}
	}
	if err := t.setUp(ctx); err != nil {
		return fmt.Errorf("crashtest: set up: %w", err)
	}
	if t.cfg.Kubeconfig != "" {
		if t.adapter, err = t.startAdapter(rep); err != nil {
			return err
		}
		defer t.adapter.stop(2 * time.Second) // first: it calls the servers
	}
	t.log.InfoContext(ctx, "trial set up", "dir", t.cfg.Dir, "urls", bases, "store", rep.Store, "seed", t.cfg.Seed)
	return t.exercise(ctx, rep)
}

// exercise runs the load and the kills, then waits for the invariants.
func (t *trial) exercise(ctx context.Context, rep *Report) error {
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	answerCtx, stopAnswers := context.WithCancel(ctx)
	t.startClients(loadCtx, answerCtx)
	defer func() {
		stopLoad()
		stopAnswers()
		<-t.clientsDone
	}()
	var restarted bool
	if t.cfg.Replicas > 1 {
		restarted = t.disrupt(ctx, rep)
	} else {
		restarted = t.kills(ctx, rep)
		if err := pause(ctx, t.cfg.Tail); err != nil {
			return err
		}
	}
	stopLoad()
	t.log.InfoContext(ctx, "load stopped", "kills", len(rep.Kills))
	if !restarted {
		stopAnswers()
		<-t.clientsDone
		rep.Violations = append(rep.Violations, t.serverExits()...)
		t.count(rep, snapshot{requests: t.requests()})
		return nil
	}
	snap, err := t.settle(ctx, rep, stopAnswers)
	if err != nil {
		return err
	}
	if len(rep.Kills) > 0 && t.cfg.Replicas == 1 {
		rep.Kills[len(rep.Kills)-1].FirstSuccess = t.sinceRestart()
	}
	if t.srv.running() {
		rep.Violations = append(rep.Violations, t.replays(ctx, snap.requests)...)
	}
	if t.cfg.Replicas > 1 {
		if err := t.clusterChecks(ctx, rep); err != nil {
			return err
		}
	}
	rep.Violations = append(rep.Violations, t.serverExits()...)
	t.count(rep, snap)
	return nil
}

// setUp registers the provider, creates the catalog item, and waits until
// Steward sees the provider healthy, so that the first orders can be placed.
func (t *trial) setUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.StartTimeout)
	defer cancel()
	types := []string{"container"}
	if t.cfg.Kubeconfig != "" {
		if err := t.setUpAdapted(ctx); err != nil {
			return err
		}
		types = append(types, adaptedType)
	}
	reg, err := provider.NewRegistrar(provider.RegistrarConfig{StewardURLs: t.api.bases, HTTPClient: t.api.hc,
		Registration: provider.Registration{Name: providerName, Endpoint: t.prov.url, ServiceTypes: types,
			Operations: []string{provider.OperationCredentials, provider.OperationExport}, CallToken: callToken}})
	if err != nil {
		return err
	}
	if _, err := reg.Register(ctx); err != nil {
		return err
	}
	item := map[string]any{"display_name": "crash test", "service_type": "container",
		"defaults": map[string]any{"process": map[string]any{"command": []string{"sleep"}, "args": []string{"3600"}}}}
	if err := t.api.send(ctx, http.MethodPost, "/api/v1/catalog-items?id="+catalogItemID, item, nil); err != nil {
		return err
	}
	if t.cfg.Kubeconfig != "" {
		adapted := map[string]any{"display_name": "crash test, adapted", "service_type": adaptedType, "defaults": map[string]any{}}
		if err := t.api.send(ctx, http.MethodPost, "/api/v1/catalog-items?id="+adaptedItem, adapted, nil); err != nil {
			return err
		}
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		provs, err := list[struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		}](ctx, t.api, "/api/v1/providers", nil)
		for _, p := range provs {
			if err == nil && p.Name == providerName && p.Status == "healthy" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("provider %s not healthy in time (last error: %v)", providerName, err)
		case <-tick.C:
		}
	}
}

func (t *trial) startClients(loadCtx, answerCtx context.Context) {
	var wg sync.WaitGroup
	for i := range t.cfg.Clients {
		c := &client{n: i + 1, t: t, api: t.api.from(i), rng: rand.New(rand.NewPCG(t.cfg.Seed, uint64(i+1))),
			interval: t.cfg.OpInterval}
		t.clients = append(t.clients, c)
		wg.Go(func() { c.run(loadCtx, answerCtx) })
	}
	t.clientsDone = make(chan struct{})
	go func() {
		wg.Wait()
		close(t.clientsDone)
	}()
}

// kills kills and restarts the server Kills times; it reports false when a
// restart failed (a violation is then recorded, and there are no more).
func (t *trial) kills(ctx context.Context, rep *Report) bool {
	for range t.cfg.Kills {
		d := t.cfg.KillDelayMin + time.Duration(t.rng.Int64N(int64(t.cfg.KillDelayMax-t.cfg.KillDelayMin)+1))
		if pause(ctx, d) != nil {
			return false
		}
		if n := len(rep.Kills); n > 0 {
			rep.Kills[n-1].FirstSuccess = t.sinceRestart()
		}
		k := Kill{At: time.Since(t.start), Time: time.Now(), InFlight: int(t.inFlight.Load()), Signal: "SIGKILL"}
		if t.cfg.Terminate {
			k.Signal = "SIGTERM"
			var problems []string
			k.Unready, k.Exited, problems = t.srv.terminate(ctx, t.cfg.StopTimeout)
			for _, p := range problems {
				rep.Violations = append(rep.Violations, Violation{Invariant: InvariantGracefulStop,
					Subject: fmt.Sprintf("SIGTERM %d", len(rep.Kills)+1), Detail: p})
			}
		} else {
			t.srv.kill()
		}
		t.mu.Lock()
		t.lastKill = k.Time
		t.restartAt, t.firstSuccess = time.Now(), time.Time{}
		t.mu.Unlock()
		err := t.srv.start()
		if err == nil {
			k.Ready, err = t.srv.waitReady(ctx, t.cfg.StartTimeout)
		}
		rep.Kills = append(rep.Kills, k)
		t.log.InfoContext(ctx, "killed and restarted", "kill", len(rep.Kills), "at", k.At, "in_flight", k.InFlight,
			"ready", k.Ready, "error", err)
		if err != nil {
			rep.Violations = append(rep.Violations, Violation{Invariant: InvariantServerRuns,
				Subject: fmt.Sprintf("restart after kill %d", len(rep.Kills)), Detail: err.Error()})
			return false
		}
	}
	return true
}

// settle polls until every invariant holds or the deadline passes, then
// returns the last snapshot, with the violations in rep.
func (t *trial) settle(ctx context.Context, rep *Report, stopAnswers context.CancelFunc) (snapshot, error) {
	t.mu.Lock()
	from := cmp.Or(t.restartAt, time.Now())
	t.mu.Unlock()
	deadline := time.Now().Add(t.cfg.SettleTimeout)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		done := closed(t.clientsDone)
		snap, err := t.snapshot(ctx, done)
		if err == nil {
			rep.Violations = check(snap)
			if len(rep.Violations) == 0 && done {
				rep.Settled = time.Since(from)
				return snap, nil
			}
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return snapshot{}, ctx.Err()
		case <-tick.C:
		}
	}
	t.log.InfoContext(ctx, "deadline passed; checking what is left")
	stopAnswers()
	<-t.clientsDone
	snap, err := t.snapshot(ctx, true)
	if err != nil {
		rep.Violations = []Violation{{Invariant: InvariantServerRuns, Subject: "server",
			Detail: "Steward's state cannot be read: " + err.Error()}}
		return snapshot{requests: t.requests()}, nil
	}
	rep.Violations = check(snap)
	return snap, nil
}

// snapshot reads the clients' requests first, then Steward's state, then
// the provider's: an answer given after the requests were read is not
// taken for one the state must show.
func (t *trial) snapshot(ctx context.Context, clientsDone bool) (snapshot, error) {
	t.mu.Lock()
	lastKill := t.lastKill
	t.mu.Unlock()
	s := snapshot{requests: t.requests(), clientsDone: clientsDone, start: t.start, lastKill: lastKill}
	var err error
	deleted := url.Values{"show_deleted": {"true"}}
	if s.orders, err = list[orderView](ctx, t.api, "/api/v1/catalog-item-instances", deleted); err != nil {
		return s, err
	}
	if s.tasks, err = list[taskView](ctx, t.api, "/api/v1/cleanup-tasks", nil); err != nil {
		return s, err
	}
	if s.ops, err = list[operationView](ctx, t.api, "/api/v1/operations", nil); err != nil {
		return s, err
	}
	insts, err := list[instanceView](ctx, t.api, "/api/v1/service-type-instances", deleted)
	if err != nil {
		return s, err
	}
	s.instances = make(map[string]instanceView, len(insts))
	for _, in := range insts {
		s.instances[in.ID] = in
	}
	if t.adapter != nil {
		if s.adapted, err = t.adapterStatuses(ctx, s.orders); err != nil {
			return s, err
		}
	}
	s.held = t.prov.mem.snapshot()
	s.rotations = t.prov.mem.rotationCounts()
	return s, nil
}

func (t *trial) requests() []request {
	var all []request
	for _, c := range t.clients {
		all = append(all, c.snapshot()...)
	}
	return all
}

// replays sends every key that has a final answer once more: it must
// replay that answer.
func (t *trial) replays(ctx context.Context, reqs []request) []Violation {
	jobs := make(chan request)
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		out []Violation
	)
	for range 4 {
		wg.Go(func() {
			for r := range jobs {
				if v, bad := t.replay(ctx, r); bad {
					mu.Lock()
					out = append(out, v)
					mu.Unlock()
				}
			}
		})
	}
	for _, r := range reqs {
		if r.Key != "" && r.Final != nil {
			jobs <- r
		}
	}
	close(jobs)
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].Subject < out[j].Subject })
	return out
}

func (t *trial) replay(ctx context.Context, r request) (Violation, bool) {
	v := Violation{Invariant: InvariantKeyReplays, Subject: "key " + r.Key}
	ans, _, err := t.api.do(ctx, r.Method, r.Path, r.Key, r.Body)
	switch {
	case err != nil:
		v.Detail = fmt.Sprintf("%s, final answer %s, got no answer when sent again: %v", r.describe(), r.Final, err)
	case !ans.Replayed:
		v.Detail = fmt.Sprintf("%s, final answer %s (id %q), was not replayed when sent again but answered %s (id %q)",
			r.describe(), r.Final, r.Final.ID, ans, ans.ID)
	case ans.Status != r.Final.Status || (r.Final.ok() && ans.ID != r.Final.ID):
		v.Detail = fmt.Sprintf("%s, final answer %s (id %q), replayed %s (id %q)", r.describe(), r.Final, r.Final.ID,
			ans, ans.ID)
	default:
		return v, false
	}
	return v, true
}

// serverExits turns each incarnation that exited by itself into a violation.
func (t *trial) serverExits() []Violation {
	var out []Violation
	for i, srv := range t.srvs {
		subject := "server"
		if len(t.srvs) > 1 {
			subject = fmt.Sprintf("replica %d", i+1)
		}
		for _, line := range srv.exitedByItself() {
			out = append(out, Violation{Invariant: InvariantServerRuns, Subject: subject, Detail: line})
		}
	}
	return out
}

// noteSuccess records a 2xx answered at at.
func (t *trial) noteSuccess(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.restartAt.IsZero() && t.firstSuccess.IsZero() && at.After(t.restartAt) {
		t.firstSuccess = at
	}
}

// sinceRestart is the time from the last restart to the first 2xx after
// it, 0 when none came.
func (t *trial) sinceRestart() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.firstSuccess.IsZero() {
		return 0
	}
	return t.firstSuccess.Sub(t.restartAt)
}

// count fills rep.Counts from the last snapshot.
func (t *trial) count(rep *Report, s snapshot) {
	c := &rep.Counts
	c.Kills = len(rep.Kills)
	for _, r := range s.requests {
		if r.Attempts > 1 {
			c.Retried++
		}
		if r.Final == nil {
			c.Unanswered++
		}
		switch r.Kind {
		case kindCreate:
			c.Creates++
			switch {
			case r.acked() != "" && !r.Final.ok():
				c.CreatesAcknowledged++
				c.CreatesOrderExists++
			case r.acked() != "":
				c.CreatesAcknowledged++
			case r.Final != nil:
				c.CreatesRefused++
			}
		case kindRehydrate:
			c.Rehydrates++
			switch {
			case r.Final == nil:
			case r.Final.ok():
				c.RehydratesAccepted++
			default:
				c.RehydratesRefused++
			}
		case kindUpdate:
			c.Updates++
			if r.Final != nil && r.Final.ok() {
				c.UpdatesAcknowledged++
			}
		case kindRotate:
			c.Rotations++
			if r.Final != nil && r.Final.ok() {
				c.RotationsAccepted++
			}
		case kindDelete:
			c.Deletes++
			if r.Final != nil && r.Final.ok() {
				c.DeletesAcknowledged++
			}
		}
	}
	c.NoAnswerAttempts = int(t.noAnswer.Load())
	c.KeyInUseAnswers = int(t.inUse.Load())
	c.ProviderCreateCalls, c.ProviderDeleteCalls = t.prov.mem.counts()
	for _, n := range s.rotations {
		c.ProviderRotations += n
	}
	for _, h := range s.held {
		if h.CopiedFrom != "" {
			c.Copies++
		}
		if h.CopyFailed {
			c.CopiesFailed++
		}
	}
	c.OrdersListed, c.OperationsListed, c.CleanupTasksAtTheEnd = len(s.orders), len(s.ops), len(s.tasks)
	for _, o := range s.orders {
		if o.ServiceType == adaptedType {
			c.AdaptedOrders++
		}
	}
}

func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
