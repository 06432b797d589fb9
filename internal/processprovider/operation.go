package processprovider

import (
	"slices"
	"sync"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// operation is one repair operation: its request and its progress, which
// every report carries whole.
type operation struct {
	id  string
	in  *instance
	out *latestBox

	mu sync.Mutex
	// req is the request as last delivered: its Token is the one to
	// report with.
	req    provider.RepairRequest
	status string
	steps  []provider.RepairStep
	err    *provider.RepairError
	state  *provider.RuntimeState
}

func newOperation(in *instance, req provider.RepairRequest) *operation {
	steps := make([]provider.RepairStep, len(provider.RepairStepNames))
	for i, name := range provider.RepairStepNames {
		steps[i] = provider.RepairStep{Name: name, Status: provider.RepairPending}
	}
	return &operation{id: req.OperationID, in: in, out: &latestBox{}, req: req,
		status: provider.RepairRunning, steps: steps}
}

// request is the request as last delivered.
func (op *operation) request() provider.RepairRequest {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.req
}

// redeliver takes the token of a redelivery for later reports, and reports
// whether the operation has finished.
func (op *operation) redeliver(token string) (finished bool) {
	op.mu.Lock()
	defer op.mu.Unlock()
	if token != "" {
		op.req.Token = token
	}
	return op.status != provider.RepairRunning
}

// currentStatus is running, succeeded or failed.
func (op *operation) currentStatus() string {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.status
}

// report is the operation's progress as a report.
func (op *operation) report() provider.RepairReport {
	op.mu.Lock()
	defer op.mu.Unlock()
	return provider.RepairReport{Status: op.status, Steps: slices.Clone(op.steps), Error: op.err, RuntimeState: op.state}
}

// begin marks step i running since now.
func (op *operation) begin(i int, now time.Time) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.steps[i].Status, op.steps[i].StartedAt = provider.RepairRunning, &now
}

// end records step i's outcome at now.
func (op *operation) end(i int, res stepResult, now time.Time) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.steps[i].Status, op.steps[i].Message, op.steps[i].FinishedAt = res.status, res.message, &now
}

// skip marks step i skipped without running it.
func (op *operation) skip(i int, msg string) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.steps[i].Status, op.steps[i].Message = provider.RepairSkipped, msg
}

// finish ends the operation: failed with err, or succeeded when err is nil.
func (op *operation) finish(err *provider.RepairError, state provider.RuntimeState) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.status, op.err, op.state = provider.RepairSucceeded, err, &state
	if err != nil {
		op.status = provider.RepairFailed
	}
}
