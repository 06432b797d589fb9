package crashtest

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// The invariants a trial checks; [Violation.Invariant] is one of them.
const (
	// InvariantOrderOnce: every acknowledged create's order exists, once,
	// under the id it was acknowledged with; no key makes two orders, and a
	// create answered with a refusal makes none.
	InvariantOrderOnce = "order-exactly-once"
	// InvariantLiveInstanceHeld: each live order is up, and its current
	// instance is held by the provider.
	InvariantLiveInstanceHeld = "live-order-instance-held"
	// InvariantOtherInstanceCleanup: every instance the provider holds that
	// is not a live order's current one has a cleanup task.
	InvariantOtherInstanceCleanup = "other-instance-has-cleanup-task"
	// InvariantCleanupTaskTakenOver: no cleanup task stays claimed
	// (IN_PROGRESS) by a process that was killed.
	InvariantCleanupTaskTakenOver = "cleanup-task-taken-over"
	// InvariantDeletionReachesProvider: after an acknowledged DELETE, the
	// provider holds none of the order's instances.
	InvariantDeletionReachesProvider = "deletion-reaches-provider"
	// InvariantDeletionFinishes: after an acknowledged DELETE, the order
	// ends terminated.
	InvariantDeletionFinishes = "deletion-finishes"
	// InvariantKeyAnswered: every Idempotency-Key (and every DELETE) gets a
	// final answer.
	InvariantKeyAnswered = "key-gets-final-answer"
	// InvariantKeyReplays: a key sent again after its final answer replays
	// that answer (Idempotent-Replayed, same status, same id).
	InvariantKeyReplays = "key-replays-final-answer"
	// InvariantOperationDone: every Operation is done.
	InvariantOperationDone = "operation-done"
	// InvariantRotationOnce: a rotation of credentials reaches the
	// provider once if it succeeded, and never twice.
	InvariantRotationOnce = "rotation-reaches-provider-once"
	// InvariantDataKept: a live order's current instance holds the data
	// its order was first created with (a rehydration copied it; a failed
	// copy left the order on the old instance), and takes writes.
	InvariantDataKept = "data-kept-and-writable"
	// InvariantNoServerError: no final answer is a 5xx.
	InvariantNoServerError = "no-5xx-answer"
	// InvariantServerRuns: the server restarts after each kill, and exits
	// only when killed.
	InvariantServerRuns = "server-runs"
	// InvariantGracefulStop: with Config.Terminate, each SIGTERM turns
	// /readyz to 503 while the server still serves, and the process then
	// exits 0 within the bound.
	InvariantGracefulStop = "graceful-stop"
	// InvariantInstanceOnce: the provider never made one instance twice
	// (created again after it was deleted).
	InvariantInstanceOnce = "instance-created-once"
	// InvariantUpdateApplied: a live order holds what its last
	// acknowledged update (PATCH) asked for.
	InvariantUpdateApplied = "last-update-applied"
	// InvariantTakeover: in a cluster trial, a killed replica's peers take
	// its work and River's leadership over, and a killed NATS node's
	// stream gets a new leader, within 30s (the figures are in Kills).
	InvariantTakeover = "taken-over"
	// InvariantSingletonOnce: in a cluster trial, no periodic job (a
	// singleton) ran on two processes, or twice, at once, and no two
	// replicas' sentinels published in the same period.
	InvariantSingletonOnce = "singleton-runs-alone"
	// InvariantEventOnce: in a cluster trial, every event written to the
	// outbox reached the stream, and none is in it twice.
	InvariantEventOnce = "event-published-once"
	// InvariantAdapterReported: with an adapter, it reported on every live
	// adapted order's current generation with Available=True (a deleted
	// one's cleanup is InvariantDeletionFinishes: the deletion waits for it).
	InvariantAdapterReported = "adapter-reported-current-generation"
)

// Violation is one broken invariant, about one order, key, instance or
// operation.
type Violation struct {
	Invariant string `json:"invariant"`
	// Subject names what it is about: "order o-c1-4", "key …", "instance …".
	Subject string `json:"subject"`
	Detail  string `json:"detail"`
}

// String renders v as "[invariant] subject: detail".
func (v Violation) String() string {
	return fmt.Sprintf("[%s] %s: %s", v.Invariant, v.Subject, v.Detail)
}

// Kill is one SIGKILL (or, with Config.Terminate, SIGTERM) and the restart
// after it.
type Kill struct {
	// Signal is "SIGKILL" or "SIGTERM".
	Signal string `json:"signal"`
	// Target names what a cluster trial stopped: "replica 2 (River's
	// leader)", "NATS node nats-1 (leads stream STEWARD)".
	Target string `json:"target,omitempty"`
	// Reaped is, after a replica's SIGKILL, the time until its peers had
	// taken its work over (its process row reaped: jobs and keys handed
	// back); LeaderMoved the time until a live process led (River's
	// leader, or the stream's after a NATS node's kill).
	Reaped      time.Duration `json:"reaped,omitempty"`
	LeaderMoved time.Duration `json:"leader_moved,omitempty"`
	// SentinelLed is, after River's leader's SIGKILL, the time until a live
	// replica's sentinel led (its decision cycles moved with the leader).
	SentinelLed time.Duration `json:"sentinel_led,omitempty"`
	// Unready is, after a SIGTERM, the time until /readyz first answered
	// 503; Exited the time until the process exited.
	Unready time.Duration `json:"unready,omitempty"`
	Exited  time.Duration `json:"exited,omitempty"`
	// At is when it fell, since the trial started; Time is the wall clock,
	// to find it in the server log.
	At   time.Duration `json:"at"`
	Time time.Time     `json:"time"`
	// InFlight is how many client requests were in flight.
	InFlight int `json:"in_flight"`
	// Ready is the time from the restart until /api/v1/health answered 200.
	Ready time.Duration `json:"ready"`
	// FirstSuccess is the time from the restart until a client request was
	// answered 2xx; 0 when none was before the next kill or the end.
	FirstSuccess time.Duration `json:"first_success"`
}

// Counts are what the clients sent and how it was answered.
type Counts struct {
	Creates             int `json:"creates"`
	CreatesAcknowledged int `json:"creates_acknowledged"`
	// CreatesOrderExists are the acknowledged creates whose final answer
	// was 409 ORDER_EXISTS on a retry.
	CreatesOrderExists  int `json:"creates_order_exists"`
	CreatesRefused      int `json:"creates_refused"`
	Rehydrates          int `json:"rehydrates"`
	RehydratesAccepted  int `json:"rehydrates_accepted"`
	RehydratesRefused   int `json:"rehydrates_refused"`
	Updates             int `json:"updates"`
	UpdatesAcknowledged int `json:"updates_acknowledged"`
	Rotations           int `json:"rotations"`
	RotationsAccepted   int `json:"rotations_accepted"`
	// ProviderRotations is how many rotations the provider did.
	ProviderRotations int `json:"provider_rotations"`
	// Copies are the rehydrations' data copies the provider ran, and
	// CopiesFailed those it failed on purpose.
	Copies               int `json:"copies"`
	CopiesFailed         int `json:"copies_failed"`
	Deletes              int `json:"deletes"`
	DeletesAcknowledged  int `json:"deletes_acknowledged"`
	Unanswered           int `json:"unanswered"`
	Retried              int `json:"retried"`
	NoAnswerAttempts     int `json:"no_answer_attempts"`
	KeyInUseAnswers      int `json:"key_in_use_answers"`
	Kills                int `json:"kills"`
	ProviderCreateCalls  int `json:"provider_create_calls"`
	ProviderDeleteCalls  int `json:"provider_delete_calls"`
	OrdersListed         int `json:"orders_listed"`
	OperationsListed     int `json:"operations_listed"`
	CleanupTasksAtTheEnd int `json:"cleanup_tasks_at_the_end"`
	// SingletonRuns and StreamEvents are what a cluster trial checked:
	// the periodic jobs' runs and the events in the stream.
	SingletonRuns int `json:"singleton_runs,omitempty"`
	StreamEvents  int `json:"stream_events,omitempty"`
	// SentinelReplicas counts the replicas whose sentinel published, one
	// after the other: more than one when leadership moved.
	SentinelReplicas int `json:"sentinel_replicas,omitempty"`
	// AdaptedOrders counts the orders of the adapted type listed at the end.
	AdaptedOrders int `json:"adapted_orders,omitempty"`
}

// Report is the outcome of one trial.
type Report struct {
	Pass bool `json:"pass"`
	// Store is "sqlite" or "postgres".
	Store      string      `json:"store"`
	Seed       uint64      `json:"seed"`
	Violations []Violation `json:"violations"`
	Counts     Counts      `json:"counts"`
	Kills      []Kill      `json:"kills"`
	// Settled is the time from the last restart until every invariant
	// held (the load goes on for Config.Tail of it, and every client must
	// have its final answers); 0 when they did not by the deadline.
	Settled time.Duration `json:"settled"`
	// Started is when the trial started; Duration how long it took.
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	// LogPath is the server's log (every incarnation, with a line where
	// each started and was killed); Dir the trial's directory.
	LogPath string `json:"log_path"`
	Dir     string `json:"dir"`
	// ReplicaLogs and NATSLogs are a cluster trial's logs, one per process.
	ReplicaLogs []string `json:"replica_logs,omitempty"`
	NATSLogs    []string `json:"nats_logs,omitempty"`
	AdapterLog  string   `json:"adapter_log,omitempty"`
}

// maxPerInvariant bounds the violations String lists per invariant.
const maxPerInvariant = 25

// String is the report for a person: a summary, the kills, and the
// violations (at most 25 per invariant).
func (r Report) String() string {
	var b strings.Builder
	verdict := "PASS"
	if !r.Pass {
		verdict = "FAIL"
	}
	c := r.Counts
	fmt.Fprintf(&b, "%s on %s (seed %d) in %.1fs: %d kills; creates %d acknowledged (%d as ORDER_EXISTS) of %d, %d refused;"+
		" updates %d acknowledged of %d; rehydrates %d accepted of %d, %d refused; %d copies of data (%d failed); rotations %d accepted of %d, %d done by the provider;"+
		" deletes %d acknowledged of %d; %d never answered;"+
		" %d requests retried, %d attempts unanswered, %d answers IDEMPOTENCY_KEY_IN_USE;"+
		" provider got %d creates and %d deletes; %d orders, %d operations, %d cleanup tasks listed at the end\n",
		verdict, r.Store, r.Seed, r.Duration.Seconds(), c.Kills, c.CreatesAcknowledged, c.CreatesOrderExists, c.Creates,
		c.CreatesRefused, c.UpdatesAcknowledged, c.Updates, c.RehydratesAccepted, c.Rehydrates, c.RehydratesRefused, c.Copies, c.CopiesFailed, c.RotationsAccepted, c.Rotations,
		c.ProviderRotations, c.DeletesAcknowledged, c.Deletes,
		c.Unanswered, c.Retried, c.NoAnswerAttempts, c.KeyInUseAnswers, c.ProviderCreateCalls, c.ProviderDeleteCalls,
		c.OrdersListed, c.OperationsListed, c.CleanupTasksAtTheEnd)
	if c.SingletonRuns > 0 || c.StreamEvents > 0 {
		fmt.Fprintf(&b, "  %d runs of periodic jobs, %d events in the stream and %d replicas' sentinel cycles in turn checked; %d orders of the adapted type\n",
			c.SingletonRuns, c.StreamEvents, c.SentinelReplicas, c.AdaptedOrders)
	}
	for i, k := range r.Kills {
		if k.Target != "" {
			fmt.Fprintf(&b, "  %s %d of %s at +%.2fs (%s, %d requests in flight): %s\n", k.Signal, i+1, k.Target,
				k.At.Seconds(), k.Time.UTC().Format(time.RFC3339Nano), k.InFlight, k.clusterTimes())
			continue
		}
		first := "no client request answered 2xx after it"
		if k.FirstSuccess > 0 {
			first = "first 2xx after " + ms(k.FirstSuccess)
		}
		stop := ""
		if k.Signal == "SIGTERM" {
			stop = fmt.Sprintf("/readyz 503 after %s, exited after %s, ", ms(k.Unready), ms(k.Exited))
		}
		fmt.Fprintf(&b, "  %s %d at +%.2fs (%s, %d requests in flight): %shealthy after %s, %s\n",
			k.Signal, i+1, k.At.Seconds(), k.Time.UTC().Format(time.RFC3339Nano), k.InFlight, stop, ms(k.Ready), first)
	}
	if r.Settled > 0 {
		fmt.Fprintf(&b, "  invariants held %s after the last restart\n", ms(r.Settled))
	} else if !r.Pass {
		fmt.Fprintf(&b, "  invariants did not all hold by the deadline\n")
	}
	if len(r.Violations) > 0 {
		fmt.Fprintf(&b, "  violations (%d):\n", len(r.Violations))
		shown := map[string]int{}
		for _, v := range r.Violations {
			shown[v.Invariant]++
			switch n := shown[v.Invariant]; {
			case n <= maxPerInvariant:
				fmt.Fprintf(&b, "    %s\n", v)
			case n == maxPerInvariant+1:
				fmt.Fprintf(&b, "    [%s] … and more\n", v.Invariant)
			}
		}
	}
	if len(r.ReplicaLogs) > 0 {
		fmt.Fprintf(&b, "  replica logs: %s\n  NATS logs: %s\n", strings.Join(r.ReplicaLogs, " "), strings.Join(r.NATSLogs, " "))
		if r.AdapterLog != "" {
			fmt.Fprintf(&b, "  adapter log: %s\n", r.AdapterLog)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "  server log: %s\n", r.LogPath)
	return b.String()
}

// clusterTimes says what followed a cluster trial's stop: "taken over
// after 812ms (leader after 640ms), running again after 1.2s".
func (k Kill) clusterTimes() string {
	var parts []string
	if k.Signal == "SIGTERM" {
		parts = append(parts, fmt.Sprintf("/readyz 503 after %s, exited after %s", ms(k.Unready), ms(k.Exited)))
	}
	if k.Reaped > 0 {
		parts = append(parts, "its work taken over after "+ms(k.Reaped))
	}
	if k.LeaderMoved > 0 {
		parts = append(parts, "a live leader after "+ms(k.LeaderMoved))
	}
	if k.SentinelLed > 0 {
		parts = append(parts, "its sentinel leading after "+ms(k.SentinelLed))
	}
	return strings.Join(append(parts, "healthy again after "+ms(k.Ready)), ", ")
}

// LogTail returns the last n lines of the server log, or of each
// replica's in a cluster trial ("" when none can be read).
func (r Report) LogTail(n int) string {
	if len(r.ReplicaLogs) == 0 {
		return fileTail(r.LogPath, n)
	}
	var b strings.Builder
	for _, p := range r.ReplicaLogs {
		fmt.Fprintf(&b, "== %s ==\n%s\n", p, fileTail(p, n))
	}
	return b.String()
}

func fileTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const max = 1 << 20
	if st, err := f.Stat(); err == nil && st.Size() > max {
		_, _ = f.Seek(st.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ms renders a duration in milliseconds: "130ms".
func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }
