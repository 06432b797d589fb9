package crashtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
)

// stateUp and stateTerminated are the simple lifecycle's states a settled
// order is in (internal/statemachine/builtin/simple.json).
const (
	stateUp         = "up"
	stateTerminated = "terminated"
)

// orderView is the part of an order (catalog-item-instances) the checks read.
type orderView struct {
	ID            string            `json:"id"`
	ServiceType   string            `json:"service_type"`
	Generation    int64             `json:"generation"`
	State         string            `json:"state"`
	InstanceID    string            `json:"instance_id"`
	Status        string            `json:"status"`
	StatusMessage string            `json:"status_message"`
	LastError     string            `json:"last_error"`
	Labels        map[string]string `json:"labels"`
	DeletedAt     *time.Time        `json:"deleted_at"`
}

// taskView is a cleanup task.
type taskView struct {
	ID         string    `json:"id"`
	InstanceID string    `json:"instance_id"`
	Status     string    `json:"status"`
	RetryCount int       `json:"retry_count"`
	LastError  string    `json:"last_error"`
	UpdateTime time.Time `json:"update_time"`
}

// operationView is an Operation.
type operationView struct {
	ID         string          `json:"id"`
	Done       bool            `json:"done"`
	Metadata   map[string]any  `json:"metadata"`
	Error      json.RawMessage `json:"error"`
	CreateTime time.Time       `json:"create_time"`
}

// instanceView is a service-type-instance, for the details of a violation.
type instanceView struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	StatusMessage string `json:"status_message"`
	Deletion      *struct {
		Status        string `json:"status"`
		CleanupTaskID string `json:"cleanup_task_id"`
	} `json:"deletion"`
}

// snapshot is everything the checks read at one moment: Steward's view
// (read through the API), the provider's, and the clients'.
type snapshot struct {
	orders    []orderView
	tasks     []taskView
	ops       []operationView
	instances map[string]instanceView
	held      map[string]HeldInstance
	// rotations are the credential rotations the provider did, by
	// operation id.
	rotations map[string]int
	// adapted are the adapter's reports on the live adapted orders, by
	// order; nil when the trial runs no adapter.
	adapted  map[string]adapterStatusView
	requests []request
	// clientsDone is set once every client has stopped: only then is a
	// request without a final answer a violation rather than in progress.
	clientsDone bool
	// start is when the trial started, for the times in details.
	start time.Time
	// lastKill is when the server was last killed (zero: never): a claim
	// older than that is held by a dead process.
	lastKill time.Time
}

// check returns every violation in s, in a stable order.
func check(s snapshot) []Violation {
	c := newChecker(s)
	c.ordersOnce()
	c.liveOrders()
	c.dataKept()
	c.otherInstances()
	c.cleanupClaims()
	c.deletions()
	c.answers()
	c.operations()
	c.updates()
	c.instancesOnce()
	c.adapterReports()
	sort.SliceStable(c.out, func(i, j int) bool { return c.out[i].Invariant < c.out[j].Invariant })
	return c.out
}

// checker indexes a snapshot for the checks and collects their violations.
type checker struct {
	s       snapshot
	byID    map[string]orderView
	byKey   map[string][]string
	tasks   map[string][]taskView
	current map[string]string // instance id → live order it is current for
	acked   map[string]bool   // orders a create was acknowledged with
	out     []Violation
}

func newChecker(s snapshot) *checker {
	c := &checker{s: s, byID: map[string]orderView{}, byKey: map[string][]string{}, tasks: map[string][]taskView{},
		current: map[string]string{}, acked: map[string]bool{}}
	for _, r := range s.requests {
		if id := r.acked(); id != "" {
			c.acked[id] = true
		}
	}
	for _, o := range s.orders {
		c.byID[o.ID] = o
		if k := o.Labels[keyLabel]; k != "" {
			c.byKey[k] = append(c.byKey[k], o.ID)
		}
		if o.DeletedAt == nil && o.InstanceID != "" {
			c.current[o.InstanceID] = o.ID
		}
	}
	for _, t := range s.tasks {
		c.tasks[t.InstanceID] = append(c.tasks[t.InstanceID], t)
	}
	return c
}

func (c *checker) add(invariant, subject, format string, args ...any) {
	c.out = append(c.out, Violation{Invariant: invariant, Subject: subject, Detail: fmt.Sprintf(format, args...)})
}

// ordersOnce: every acknowledged create made exactly its order.
func (c *checker) ordersOnce() {
	for _, r := range c.s.requests {
		if r.Kind != kindCreate {
			continue
		}
		made := c.byKey[r.Key]
		subject := "key " + r.Key
		switch id := r.acked(); {
		case id != "":
			if r.WithID && id != r.OrderID {
				c.add(InvariantOrderOnce, subject, "%s acknowledged order %s, not the id it asked for", r.describe(), id)
			}
			switch {
			case len(made) == 0:
				c.add(InvariantOrderOnce, subject, "%s was acknowledged (%s after %d attempts) but order %s is not listed, not even with show_deleted",
					r.describe(), r.Final, r.Attempts, id)
			case len(made) > 1:
				c.add(InvariantOrderOnce, subject, "%s made %d orders %v; the client was answered %s for %s (%d attempts)",
					r.describe(), len(made), made, r.Final, id, r.Attempts)
			case made[0] != id:
				c.add(InvariantOrderOnce, subject, "%s was acknowledged with order %s, but the order its key made is %s",
					r.describe(), id, made[0])
			}
		case r.Final != nil:
			if r.Final.Status == http.StatusConflict && r.Final.Reason == reasonOrderExists {
				c.add(InvariantOrderOnce, subject, "%s was answered %s on its first attempt; orders with its key: %v",
					r.describe(), r.Final, made)
			} else if len(made) > 0 {
				c.add(InvariantOrderOnce, subject, "%s was answered %s after %d attempts, yet made orders %v",
					r.describe(), r.Final, r.Attempts, made)
			}
		case len(made) > 1:
			c.add(InvariantOrderOnce, subject, "%s (never answered) made %d orders %v", r.describe(), len(made), made)
		}
	}
}

// liveOrders: every order not being deleted is up on an instance the
// provider holds, and no acknowledged order disappeared.
func (c *checker) liveOrders() {
	deleteSent := map[string]bool{}
	for _, r := range c.s.requests {
		if r.Kind == kindDelete {
			deleteSent[r.OrderID] = true
		}
	}
	for _, r := range c.s.requests {
		id := r.acked()
		if id == "" || deleteSent[id] {
			continue
		}
		if o, ok := c.byID[id]; ok && o.DeletedAt != nil {
			c.add(InvariantLiveInstanceHeld, "order "+id, "was never deleted by a client but is deleted (state %s)", o.State)
		}
	}
	for _, o := range c.s.orders {
		if o.DeletedAt != nil {
			continue
		}
		subject := "order " + o.ID
		if !c.acked[o.ID] {
			subject += " (never acknowledged)"
		}
		held, known := c.s.held[o.InstanceID]
		switch {
		case o.State != stateUp:
			c.add(InvariantLiveInstanceHeld, subject, "is %s, not up: status %s, last_error %q; current %s",
				o.State, o.Status, o.LastError, c.instance(o.InstanceID))
		case o.InstanceID == "":
			c.add(InvariantLiveInstanceHeld, subject, "is up without an instance_id")
		case !known || held.Creates == 0:
			c.add(InvariantLiveInstanceHeld, subject, "is up, but the provider never received a create for its current %s",
				c.instance(o.InstanceID))
		case !held.Held:
			c.add(InvariantLiveInstanceHeld, subject, "is up, but the provider no longer holds its current %s",
				c.instance(o.InstanceID))
		case o.Status != "RUNNING":
			c.add(InvariantLiveInstanceHeld, subject, "is up with status %s; current %s", o.Status, c.instance(o.InstanceID))
		}
	}
}

// dataKept: a live order's current instance holds the data of its order's
// first instance, copied along each rehydration (followed back through
// CopiedFrom), and is not left read-only by an export.
func (c *checker) dataKept() {
	for _, o := range c.s.orders {
		h, ok := c.s.held[o.InstanceID]
		if o.DeletedAt != nil || o.State != stateUp || !ok || !h.Held {
			continue // liveOrders says why
		}
		subject := "order " + o.ID
		origin, seen := o.InstanceID, map[string]bool{}
		for from := c.s.held[origin].CopiedFrom; from != "" && !seen[from]; from = c.s.held[origin].CopiedFrom {
			seen[origin], origin = true, from
		}
		if want := "data-of:" + o.ID + ":" + origin; h.Data != want {
			c.add(InvariantDataKept, subject, "current %s (copied from %q) holds %q, not %q", o.InstanceID, h.CopiedFrom, h.Data, want)
		}
		if h.CopiedFrom == "" {
			for _, id := range sortedKeys(c.s.held) {
				if e := c.s.held[id]; e.OrderID == o.ID && e.Creates > 0 && e.FirstCreate < h.FirstCreate {
					c.add(InvariantDataKept, subject, "current %s was made without a source after instance %s: a rehydration did not carry the data",
						o.InstanceID, id)
					break
				}
			}
		}
		if h.ReadOnly {
			c.add(InvariantDataKept, subject, "current %s takes no writes: an export of it was begun and never ended; %s",
				o.InstanceID, c.instance(o.InstanceID))
		}
	}
}

// otherInstances: what the provider holds beyond live orders' current
// instances is queued for cleanup.
func (c *checker) otherInstances() {
	for _, id := range sortedKeys(c.s.held) {
		h := c.s.held[id]
		if !h.Held || c.current[id] != "" || len(c.tasks[id]) > 0 {
			continue
		}
		order := "order " + h.OrderID
		if o, ok := c.byID[h.OrderID]; ok {
			order += fmt.Sprintf(" (state %s, deleted %v, current instance %q)", o.State, o.DeletedAt != nil, o.InstanceID)
		} else {
			order += " (not listed)"
		}
		c.add(InvariantOtherInstanceCleanup, "instance "+id,
			"the provider holds it, it is not the current instance of a live order, and it has no cleanup task; %s; %s",
			order, c.instance(id))
	}
}

// cleanupClaims: no cleanup task stays claimed by a process that was
// killed. A claim of the running process is younger than the last kill, so
// an older IN_PROGRESS task can only be a dead process's: it waits for its
// claim to expire instead of being taken over (issue 8: "work that a dead
// process held is taken over promptly").
func (c *checker) cleanupClaims() {
	if c.s.lastKill.IsZero() {
		return
	}
	for _, t := range c.s.tasks {
		if t.Status == "IN_PROGRESS" && t.UpdateTime.Before(c.s.lastKill) {
			c.add(InvariantCleanupTaskTakenOver, "cleanup task "+t.ID,
				"claimed at +%.2fs by a process killed at +%.2fs, still IN_PROGRESS; %s", t.UpdateTime.Sub(c.s.start).Seconds(),
				c.s.lastKill.Sub(c.s.start).Seconds(), c.instance(t.InstanceID))
		}
	}
}

// deletions: an acknowledged DELETE reaches the provider and the order
// ends terminated.
func (c *checker) deletions() {
	for _, r := range c.s.requests {
		if r.Kind != kindDelete || r.Final == nil || !r.Final.ok() {
			continue
		}
		subject := "order " + r.OrderID
		for _, id := range sortedKeys(c.s.held) {
			h := c.s.held[id]
			if h.OrderID != r.OrderID || !h.Held {
				continue
			}
			which := "its instance at the deletion"
			if id != r.Final.InstanceID {
				which = fmt.Sprintf("an earlier instance of it (the DELETE answer named %q)", r.Final.InstanceID)
			}
			c.add(InvariantDeletionReachesProvider, subject, "DELETE was acknowledged at +%.2fs, but the provider still holds %s, %s",
				r.Final.At.Sub(c.s.start).Seconds(), which, c.instance(id))
		}
		o, ok := c.byID[r.OrderID]
		switch {
		case !ok:
			// Purged: gone for good.
		case o.DeletedAt == nil:
			c.add(InvariantDeletionFinishes, subject, "DELETE was acknowledged (%s) but the order has no deleted_at (state %s)",
				r.Final, o.State)
		case o.State != stateTerminated:
			c.add(InvariantDeletionFinishes, subject, "DELETE was acknowledged at +%.2fs but the order is %s, not terminated; last_error %q; current %s",
				r.Final.At.Sub(c.s.start).Seconds(), o.State, o.LastError, c.instance(o.InstanceID))
		}
	}
}

// answers: every request got a final answer, and none is a 5xx.
func (c *checker) answers() {
	for _, r := range c.s.requests {
		subject := "key " + r.Key
		if r.Key == "" {
			subject = "order " + r.OrderID
		}
		switch {
		case r.Final == nil:
			state := "still waiting"
			if c.s.clientsDone {
				state = "gave up"
			}
			c.add(InvariantKeyAnswered, subject, "%s sent at +%.2fs has no final answer after %d attempts (%s); last: %s",
				r.describe(), r.Sent.Sub(c.s.start).Seconds(), r.Attempts, state, r.Last)
		case r.Final.Status >= 500:
			c.add(InvariantNoServerError, subject, "%s was answered %s after %d attempts", r.describe(), r.Final, r.Attempts)
		}
	}
}

// operations: every Operation is done, acknowledged ones included; a
// rotation of credentials reached the provider once if it succeeded, and
// never twice.
func (c *checker) operations() {
	listed := map[string]bool{}
	for _, op := range c.s.ops {
		listed[op.ID] = true
		if !op.Done {
			c.add(InvariantOperationDone, "operation "+op.ID, "not done (started at +%.2fs): %s",
				op.CreateTime.Sub(c.s.start).Seconds(), c.operationMeta(op))
		}
		if op.Metadata["kind"] != "rotate_credentials" {
			continue
		}
		switch n := c.s.rotations[op.ID]; {
		case n > 1:
			c.add(InvariantRotationOnce, "operation "+op.ID, "rotated the credentials %d times: %s", n, c.operationMeta(op))
		case op.Done && op.Error == nil && n != 1:
			c.add(InvariantRotationOnce, "operation "+op.ID, "succeeded but the provider rotated %d times: %s", n,
				c.operationMeta(op))
		}
	}
	for _, r := range c.s.requests {
		if (r.Kind == kindRehydrate || r.Kind == kindRotate) && r.Final != nil && r.Final.ok() && !listed[r.Final.ID] {
			c.add(InvariantOperationDone, "operation "+r.Final.ID, "%s was answered %s with this operation, which is not listed",
				r.describe(), r.Final)
		}
	}
}

// updates: each order holds the revLabel its last acknowledged update set
// (or one a later update with no final answer may have set).
func (c *checker) updates() {
	byOrder := map[string][]request{}
	for _, r := range c.s.requests {
		if r.Kind == kindUpdate {
			byOrder[r.OrderID] = append(byOrder[r.OrderID], r)
		}
	}
	for _, id := range sortedKeys(byOrder) {
		o, ok := c.byID[id]
		if !ok {
			continue // purged; ordersOnce and deletions speak of it
		}
		ups := byOrder[id]
		sort.SliceStable(ups, func(i, j int) bool { return ups[i].Sent.Before(ups[j].Sent) })
		allowed, last := map[string]bool{}, "(none)"
		for _, u := range ups {
			switch {
			case u.Final != nil && u.Final.ok():
				allowed, last = map[string]bool{u.Rev: true}, u.Rev
			case u.Final == nil || u.Final.Status >= 500:
				allowed[u.Rev] = true // it may or may not have been applied
			}
		}
		if last == "(none)" {
			allowed[""] = true
		}
		if got := o.Labels[revLabel]; !allowed[got] {
			c.add(InvariantUpdateApplied, "order "+id, "holds %s=%q, but its last acknowledged update set %q (%d updates sent)",
				revLabel, got, last, len(ups))
		}
	}
}

// adapterReports: the adapter reported on each live adapted order's
// current generation, and its namespace is Available: the sentinel's
// events reached it through the kills, and its reports were stored.
func (c *checker) adapterReports() {
	if c.s.adapted == nil {
		return
	}
	for _, o := range c.s.orders {
		if o.DeletedAt != nil || o.ServiceType != adaptedType {
			continue
		}
		r, ok := c.s.adapted[o.ID]
		available := ""
		for _, cond := range r.Conditions {
			if cond.Type == "Available" {
				available = cond.Status + " " + cond.Reason
			}
		}
		switch {
		case !ok:
			c.add(InvariantAdapterReported, "order "+o.ID, "the adapter %s never reported on it (generation %d, state %s)",
				adapterName, o.Generation, o.State)
		case r.ObservedGeneration != o.Generation || !strings.HasPrefix(available, "True"):
			c.add(InvariantAdapterReported, "order "+o.ID, "the adapter's last report observed generation %d with Available %q; the order is at generation %d",
				r.ObservedGeneration, available, o.Generation)
		}
	}
}

// instancesOnce: the provider made no instance twice (a create after the
// instance's deletion, a resurrection).
func (c *checker) instancesOnce() {
	for _, id := range sortedKeys(c.s.held) {
		if h := c.s.held[id]; h.Realisations > 1 {
			c.add(InvariantInstanceOnce, "instance "+id, "the provider made it %d times: %s", h.Realisations, c.instance(id))
		}
	}
}

func (c *checker) operationMeta(op operationView) string {
	var parts []string
	for _, k := range []string{"kind", "target", "old_instance_id", "new_instance_id"} {
		if v, ok := op.Metadata[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	if old, ok := op.Metadata["old_instance_id"].(string); ok {
		parts = append(parts, "old "+c.instance(old))
	}
	if nw, ok := op.Metadata["new_instance_id"].(string); ok {
		parts = append(parts, "new "+c.instance(nw))
	}
	return strings.Join(parts, "; ")
}

// instance describes an instance as both sides see it: "instance X
// (provider: held RUNNING since +1.2s; steward: RUNNING, no cleanup task)".
func (c *checker) instance(id string) string {
	if id == "" {
		return "instance (none)"
	}
	var prov string
	switch h, ok := c.s.held[id]; {
	case !ok:
		prov = "never called"
	case h.Held:
		prov = fmt.Sprintf("holds it, %s, created at +%.2fs", h.Status, h.FirstCreate.Seconds())
	case h.Creates == 0:
		prov = fmt.Sprintf("deleted at +%.2fs before any create", h.LastDelete.Seconds())
	default:
		prov = fmt.Sprintf("created at +%.2fs, deleted at +%.2fs", h.FirstCreate.Seconds(), h.LastDelete.Seconds())
	}
	if h, ok := c.s.held[id]; ok {
		prov += fmt.Sprintf(" (%d creates, %d deletes, %d realisations)", h.Creates, h.Deletes, h.Realisations)
		if h.ReportError != "" {
			prov += "; report failing: " + h.ReportError
		}
	}
	st := "unknown to the SPRM"
	if in, ok := c.s.instances[id]; ok {
		st = in.Status
		if in.StatusMessage != "" {
			st += fmt.Sprintf(" %q", in.StatusMessage)
		}
		if in.Deletion != nil {
			st += ", deletion " + in.Deletion.Status
		}
	}
	tasks := "no cleanup task"
	if ts := c.tasks[id]; len(ts) > 0 {
		tasks = fmt.Sprintf("cleanup task %s %s (retries %d, last_error %q)", ts[0].ID, ts[0].Status, ts[0].RetryCount,
			ts[0].LastError)
	}
	return fmt.Sprintf("instance %s (provider: %s; steward: %s, %s)", id, prov, st, tasks)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
