package crashtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// steward's JetStream stream (events.Config's default).
const streamName = "STEWARD"

// The cluster trial's plan (Config.Replicas > 1), each step once the clients
// have sent that fraction of Config.Orders creates: SIGKILL the replica
// that is River's elected leader (it runs the singletons) and start it
// again once its peers took its work over; SIGKILL the NATS node leading
// Steward's stream and start it again once another leads; SIGTERM another
// replica and start it again.
const (
	atKillLeader  = 0.25
	atKillNATS    = 0.50
	atTerminate   = 0.75
	takeoverLimit = 30 * time.Second
)

// disrupt runs the plan; it reports false when a restart failed (the
// violation is recorded, and the plan ends).
func (t *trial) disrupt(ctx context.Context, rep *Report) bool {
	if err := t.waitCreates(ctx, atKillLeader); err != nil {
		return false
	}
	leader, err := t.leaderReplica(ctx)
	if err != nil {
		t.violation(rep, InvariantServerRuns, "cluster", "no replica is River's leader: %v", err)
		return false
	}
	k := t.newKill("SIGKILL", fmt.Sprintf("replica %d (River's leader)", leader+1))
	deadID, err := t.processID(ctx, t.srvs[leader])
	if err != nil {
		t.violation(rep, InvariantServerRuns, "cluster", "replica %d has no process row: %v", leader+1, err)
		return false
	}
	t.srvs[leader].kill()
	t.noteKill(k.Time)
	k.Reaped, k.LeaderMoved, err = t.takeover(ctx, deadID, k.Time)
	if err != nil {
		t.violation(rep, InvariantTakeover, fmt.Sprintf("replica %d", leader+1), "%v", err)
	}
	if k.SentinelLed, err = t.sentinelMoved(ctx, leader, k.Time); err != nil {
		t.violation(rep, InvariantTakeover, fmt.Sprintf("replica %d", leader+1), "%v", err)
	}
	if !t.restart(ctx, rep, leader, &k) {
		return false
	}

	if err := t.waitCreates(ctx, atKillNATS); err != nil {
		return false
	}
	node, err := t.streamLeader(ctx)
	if err != nil {
		t.violation(rep, InvariantTakeover, "nats", "no node leads stream %s: %v", streamName, err)
		return false
	}
	k = t.newKill("SIGKILL", fmt.Sprintf("NATS node %s (leads stream %s)", t.nats.nodes[node].name, streamName))
	t.nats.kill(node)
	if _, err := t.newStreamLeader(ctx, t.nats.nodes[node].name, k.Time, &k); err != nil {
		t.violation(rep, InvariantTakeover, "nats", "%v", err)
	}
	if err := t.nats.start(node); err == nil {
		restarted := time.Now()
		err = t.nats.waitHealthy(ctx, node, t.cfg.StartTimeout)
		k.Ready = time.Since(restarted)
		if err != nil {
			t.violation(rep, InvariantServerRuns, "nats", "%v", err)
		}
	} else {
		t.violation(rep, InvariantServerRuns, "nats", "%v", err)
	}
	rep.Kills = append(rep.Kills, k)
	t.log.InfoContext(ctx, "NATS node killed and restarted", "node", t.nats.nodes[node].name, "new_leader_after", k.LeaderMoved)

	if err := t.waitCreates(ctx, atTerminate); err != nil {
		return false
	}
	other := (leader + 1) % len(t.srvs)
	k = t.newKill("SIGTERM", fmt.Sprintf("replica %d", other+1))
	var problems []string
	k.Unready, k.Exited, problems = t.srvs[other].terminate(ctx, t.cfg.StopTimeout)
	for _, p := range problems {
		t.violation(rep, InvariantGracefulStop, fmt.Sprintf("SIGTERM of replica %d", other+1), "%s", p)
	}
	t.noteKill(k.Time)
	if !t.restart(ctx, rep, other, &k) {
		return false
	}
	return t.waitCreates(ctx, 1) == nil
}

func (t *trial) newKill(signal, target string) Kill {
	return Kill{Signal: signal, Target: target, At: time.Since(t.start), Time: time.Now(), InFlight: int(t.inFlight.Load())}
}

// noteKill records a replica's end: a claim older than it can be no live
// process's once it was taken over.
func (t *trial) noteKill(at time.Time) {
	t.mu.Lock()
	t.lastKill = at
	t.mu.Unlock()
}

// restart starts replica i again and records k.
func (t *trial) restart(ctx context.Context, rep *Report, i int, k *Kill) bool {
	err := t.srvs[i].start()
	if err == nil {
		k.Ready, err = t.srvs[i].waitReady(ctx, t.cfg.StartTimeout)
	}
	rep.Kills = append(rep.Kills, *k)
	t.log.InfoContext(ctx, "replica stopped and restarted", "target", k.Target, "signal", k.Signal, "reaped", k.Reaped,
		"leader_moved", k.LeaderMoved, "sentinel_led", k.SentinelLed, "ready", k.Ready, "error", err)
	if err != nil {
		t.violation(rep, InvariantServerRuns, fmt.Sprintf("restart of replica %d", i+1), "%v", err)
		return false
	}
	return true
}

func (t *trial) violation(rep *Report, invariant, subject, format string, args ...any) {
	rep.Violations = append(rep.Violations, Violation{Invariant: invariant, Subject: subject, Detail: fmt.Sprintf(format, args...)})
}

// waitCreates waits until the clients have sent frac of Config.Orders
// creates.
func (t *trial) waitCreates(ctx context.Context, frac float64) error {
	want := int64(frac * float64(t.cfg.Orders))
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for t.creates.Load() < want {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// leaderReplica returns the index of the replica River elected leader,
// waiting for an election within StartTimeout.
func (t *trial) leaderReplica(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.StartTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var pid int
		err := t.db.QueryRow(ctx, `SELECT p.pid FROM river_leader l JOIN steward_processes p ON p.id = l.leader_id`).Scan(&pid)
		if err == nil {
			for i, s := range t.srvs {
				if s.pid() == pid {
					return i, nil
				}
			}
			err = fmt.Errorf("the leader's pid %d is none of the replicas'", pid)
		}
		select {
		case <-ctx.Done():
			return 0, errors.Join(err, ctx.Err())
		case <-tick.C:
		}
	}
}

// processID is the peer id (River's client id) of replica s.
func (t *trial) processID(ctx context.Context, s *serverProc) (string, error) {
	var id string
	err := t.db.QueryRow(ctx, `SELECT id FROM steward_processes WHERE pid = $1 ORDER BY started_at DESC LIMIT 1`, s.pid()).Scan(&id)
	return id, err
}

// takeover polls until the dead process's row is gone (its peers reaped
// it: its jobs and keys are handed back) and a live process leads,
// returning the time from the kill to each.
func (t *trial) takeover(ctx context.Context, deadID string, killed time.Time) (reaped, leader time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, takeoverLimit)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if reaped == 0 {
			var n int
			if t.db.QueryRow(ctx, `SELECT count(*) FROM steward_processes WHERE id = $1`, deadID).Scan(&n) == nil && n == 0 {
				reaped = time.Since(killed)
			}
		}
		if leader == 0 {
			var id string
			if t.db.QueryRow(ctx, `SELECT leader_id FROM river_leader`).Scan(&id) == nil && id != deadID {
				leader = time.Since(killed)
			}
		}
		if reaped > 0 && leader > 0 {
			return reaped, leader, nil
		}
		select {
		case <-ctx.Done():
			return reaped, leader, fmt.Errorf("process %s: not taken over within %v (reaped after %v, leader moved after %v)",
				deadID, takeoverLimit, reaped, leader)
		case <-tick.C:
		}
	}
}

// sentinelMoved polls the live replicas' /metrics until one's sentinel
// leads (steward_sentinel_leading 1: it runs the decision cycles, which
// the dead leader's ran), returning the time from the kill (issue 46,
// item 15: docs/operations.md says what this measures).
func (t *trial) sentinelMoved(ctx context.Context, dead int, killed time.Time) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, takeoverLimit)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		for i, s := range t.srvs {
			if i != dead && s.sentinelLeads(ctx) {
				return time.Since(killed), nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no live replica's sentinel led within %v of replica %d's kill", takeoverLimit, dead+1)
		case <-tick.C:
		}
	}
}

// streamLeader returns the index of the NATS node leading Steward's stream.
func (t *trial) streamLeader(ctx context.Context) (int, error) {
	name, err := t.streamLeaderName(ctx)
	if err != nil {
		return 0, err
	}
	for i, n := range t.nats.nodes {
		if n.name == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("leader %q is none of the nodes", name)
}

func (t *trial) streamLeaderName(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s, err := t.js.Stream(ctx, streamName)
	if err != nil {
		return "", err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return "", errors.New("no leader")
	}
	return info.Cluster.Leader, nil
}

// newStreamLeader polls until a node other than dead leads the stream, and
// records the time in k.LeaderMoved.
func (t *trial) newStreamLeader(ctx context.Context, dead string, killed time.Time, k *Kill) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, takeoverLimit)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if name, err := t.streamLeaderName(ctx); err == nil && name != dead {
			k.LeaderMoved = time.Since(killed)
			return name, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("stream %s: no new leader within %v of %s's kill", streamName, takeoverLimit, dead)
		case <-tick.C:
		}
	}
}

// connectCluster opens the trial's own connections to the replicas'
// database and NATS cluster, to find leaders and read what happened.
func (t *trial) connectCluster(ctx context.Context, dbURL string) (func(), error) {
	var err error
	if t.db, err = pgxpool.New(ctx, dbURL); err != nil {
		return nil, err
	}
	if t.nc, err = nats.Connect(t.nats.url(), nats.MaxReconnects(-1)); err != nil {
		t.db.Close()
		return nil, err
	}
	closeAll := func() { t.nc.Close(); t.db.Close() }
	if t.js, err = jetstream.New(t.nc); err == nil {
		err = t.metaLeader(ctx)
	}
	if err != nil {
		closeAll()
		return nil, err
	}
	return closeAll, nil
}

// metaLeader waits until the NATS cluster has elected the leader that
// creates streams: before it, a replica's start fails.
func (t *trial) metaLeader(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.StartTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := t.js.AccountInfo(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the NATS cluster elected no JetStream leader: %w", err)
		case <-tick.C:
		}
	}
}

// clusterChecks adds what only a cluster trial checks: the singletons and
// the events.
func (t *trial) clusterChecks(ctx context.Context, rep *Report) error {
	vs, runs, err := t.singletons(ctx)
	if err != nil {
		return fmt.Errorf("crashtest: read the periodic jobs' runs: %w", err)
	}
	rep.Violations = append(rep.Violations, vs...)
	vs, events, sentinels, err := t.eventsOnce(ctx)
	if err != nil {
		return fmt.Errorf("crashtest: read the stream: %w", err)
	}
	rep.Violations = append(rep.Violations, vs...)
	rep.Counts.SingletonRuns, rep.Counts.StreamEvents, rep.Counts.SentinelReplicas = runs, events, sentinels
	return nil
}

// periodicRun is one finished run of a singleton (a periodic River job).
type periodicRun struct {
	name, by string
	from, to time.Time
	jobID    int64
}

// singletons: no periodic job ran on two processes at once, and every
// replica's periodic runs (River's jobs of kind steward.periodic that
// finished) were run one at a time per name.
func (t *trial) singletons(ctx context.Context) ([]Violation, int, error) {
	rows, err := t.db.Query(ctx, `SELECT id, args->>'name', attempted_by[array_length(attempted_by, 1)], attempted_at, finalized_at
		FROM river_job WHERE kind = 'steward.periodic' AND finalized_at IS NOT NULL AND attempted_at IS NOT NULL
		ORDER BY args->>'name', attempted_at`)
	if err != nil {
		return nil, 0, err
	}
	runs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (periodicRun, error) {
		var p periodicRun
		err := r.Scan(&p.jobID, &p.name, &p.by, &p.from, &p.to)
		return p, err
	})
	if err != nil {
		return nil, 0, err
	}
	var out []Violation
	for i := 1; i < len(runs); i++ {
		prev, cur := runs[i-1], runs[i]
		if prev.name != cur.name || !cur.from.Before(prev.to) {
			continue
		}
		out = append(out, Violation{Invariant: InvariantSingletonOnce, Subject: "periodic job " + cur.name,
			Detail: fmt.Sprintf("job %d ran on %s from +%.3fs to +%.3fs while job %d ran on %s from +%.3fs to +%.3fs",
				cur.jobID, cur.by, cur.from.Sub(t.start).Seconds(), cur.to.Sub(t.start).Seconds(),
				prev.jobID, prev.by, prev.from.Sub(t.start).Seconds(), prev.to.Sub(t.start).Seconds())})
	}
	return out, len(runs), nil
}

// eventsOnce: every event Steward wrote to its outbox reached the stream
// (the outbox is empty), no event is in the stream twice, and the replicas'
// sentinels published one at a time (sentinelsAlone). It returns how many
// events it read and how many replicas' sentinels published.
func (t *trial) eventsOnce(ctx context.Context) (vs []Violation, events, sentinelReplicas int, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var pending int
	if err := t.db.QueryRow(ctx, `SELECT count(*) FROM event_outbox`).Scan(&pending); err != nil {
		return nil, 0, 0, err
	}
	var out []Violation
	if pending > 0 {
		out = append(out, Violation{Invariant: InvariantEventOnce, Subject: "outbox",
			Detail: fmt.Sprintf("%d events were never published to the stream", pending)})
	}
	// The stream's leader may still be moving after the trial's last NATS
	// kill ("no responders"): what is checked is the events it keeps, so
	// opening it is retried until the deadline.
	var cons jetstream.Consumer
	var info *jetstream.StreamInfo
	for {
		if cons, err = t.js.OrderedConsumer(ctx, streamName, jetstream.OrderedConsumerConfig{}); err == nil {
			var s jetstream.Stream
			if s, err = t.js.Stream(ctx, streamName); err == nil {
				info, err = s.Info(ctx)
			}
		}
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil, 0, 0, err
		case <-time.After(200 * time.Millisecond):
		}
	}
	if info.Config.Replicas != 3 {
		out = append(out, Violation{Invariant: InvariantEventOnce, Subject: "stream " + streamName,
			Detail: fmt.Sprintf("keeps %d copies at the end, not the 3 the replicas asked for", info.Config.Replicas)})
	}
	seen := make(map[string]uint64, info.State.Msgs)
	var dups []string
	sentinels := map[string]*sentinelRun{}
	for n := uint64(0); n < info.State.Msgs; {
		batch, err := cons.FetchNoWait(1000)
		if err != nil {
			return nil, 0, 0, err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			n++
			meta, _ := m.Metadata()
			id := m.Headers().Get(jetstream.MsgIDHeader)
			if id == "" {
				id = fmt.Sprintf("(no id: subject %s)", m.Subject())
			}
			sentinels = noteSentinelEvent(sentinels, m.Data())
			if first, ok := seen[id]; ok && meta != nil {
				dups = append(dups, fmt.Sprintf("%s (stream sequences %d and %d)", id, first, meta.Sequence.Stream))
			} else if meta != nil {
				seen[id] = meta.Sequence.Stream
			}
		}
		if err := batch.Error(); err != nil {
			return nil, 0, 0, err
		}
		if got == 0 {
			if err := pause(ctx, 50*time.Millisecond); err != nil {
				return nil, 0, 0, err
			}
		}
	}
	slices.Sort(dups)
	for _, d := range dups {
		out = append(out, Violation{Invariant: InvariantEventOnce, Subject: "event " + d, Detail: "published twice"})
	}
	out = append(out, t.sentinelsAlone(sentinels)...)
	return out, len(seen), len(sentinels), nil
}

// sentinelRun is when one replica's sentinel published: the times of its
// first and last reconcile events.
type sentinelRun struct {
	source      string
	first, last time.Time
	events      int
}

// noteSentinelEvent adds a stream message to its replica's sentinelRun if it
// is a server's reconcile event (source /steward/sentinel/<replica>).
func noteSentinelEvent(runs map[string]*sentinelRun, data []byte) map[string]*sentinelRun {
	var ev struct {
		Source string    `json:"source"`
		Time   time.Time `json:"time"`
	}
	if json.Unmarshal(data, &ev) != nil || !strings.HasPrefix(ev.Source, "/steward/sentinel/") {
		return runs
	}
	r := runs[ev.Source]
	if r == nil {
		r = &sentinelRun{source: ev.Source, first: ev.Time, last: ev.Time}
		runs[ev.Source] = r
	}
	if ev.Time.Before(r.first) {
		r.first = ev.Time
	}
	if ev.Time.After(r.last) {
		r.last = ev.Time
	}
	r.events++
	return runs
}

// sentinelsAlone: the sentinel's cycles are a singleton too, so the
// replicas' publishing periods never overlap. A replica leads from its
// election to its death or stop (the trial kills and stops replicas; it
// does not cut one off from the database), so leadership never comes back
// to a replica that lost it.
func (t *trial) sentinelsAlone(runs map[string]*sentinelRun) []Violation {
	byStart := slices.SortedFunc(maps.Values(runs), func(a, b *sentinelRun) int { return a.first.Compare(b.first) })
	var out []Violation
	for i := 1; i < len(byStart); i++ {
		prev, cur := byStart[i-1], byStart[i]
		if !cur.first.Before(prev.last) {
			continue
		}
		out = append(out, Violation{Invariant: InvariantSingletonOnce, Subject: "sentinel cycles",
			Detail: fmt.Sprintf("%s published from +%.3fs to +%.3fs (%d events) while %s published from +%.3fs to +%.3fs (%d events)",
				cur.source, cur.first.Sub(t.start).Seconds(), cur.last.Sub(t.start).Seconds(), cur.events,
				prev.source, prev.first.Sub(t.start).Seconds(), prev.last.Sub(t.start).Seconds(), prev.events)})
	}
	if len(runs) == 0 {
		out = append(out, Violation{Invariant: InvariantSingletonOnce, Subject: "sentinel cycles",
			Detail: "no server's sentinel published a reconcile event: nothing shows who ran the cycles"})
	}
	return out
}
