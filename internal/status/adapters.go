package status

import (
	"fmt"
	"strings"
	"time"
)

// Report is an adapter's latest report on an order, as the rules read it:
// the four conditions they look at, each with an empty Status when the
// report has none of that type.
type Report struct {
	Adapter            string
	ObservedGeneration int64
	ObservedTime       time.Time
	Applied            ReportCondition
	Available          ReportCondition
	Health             ReportCondition
	// Finalized=True passes the deletion gate alone.
	Finalized ReportCondition
}

// ReportCondition is one condition of an adapter's report.
type ReportCondition struct {
	Status  string
	Reason  string
	Message string
}

// why is the condition's reason and message, as a message quotes them.
func (c ReportCondition) why() string { return strings.TrimSpace(c.Reason + " " + c.Message) }

// Adapters is what the adapters said of an order.
type Adapters struct {
	// Required are the order's service type's required adapters: they
	// count even when they never reported.
	Required []string
	// Reports holds each adapter's latest report on the order.
	Reports []Report
	// ReadErr is why the reports could not be read; Ready then waits and
	// says so.
	ReadErr error
}

// AdaptersReady folds the required adapters into o's Ready condition
// ready (as [Ready] derived it): a Ready order whose service type has
// required adapters is Ready only when each of them reported
// Available=True at the order's current generation; else Ready=False,
// reason AdaptersNotReady, and the message names each adapter that holds
// it back and why. Other adapters' reports do not count.
func AdaptersReady(ready Condition, o Order, a Adapters) Condition {
	if ready.Status != True || len(a.Required) == 0 {
		return ready
	}
	var hold string
	if a.ReadErr != nil {
		hold = "adapter reports could not be read: " + a.ReadErr.Error()
	} else {
		hold = adaptersHold(a.Required, a.Reports, o.Generation)
	}
	if hold != "" {
		ready.Status, ready.Reason, ready.Message = False, ReasonAdaptersNotReady, "waiting for "+hold
	}
	return ready
}

// adaptersHold says which of the required adapters do not report
// Available=True at generation, and why; "" when all do.
func adaptersHold(required []string, reports []Report, generation int64) string {
	latest := make(map[string]Report, len(reports))
	for _, r := range reports {
		latest[r.Adapter] = r
	}
	var held []string
	for _, name := range required {
		r, ok := latest[name]
		switch {
		case !ok:
			held = append(held, fmt.Sprintf("adapter %s (no report yet)", name))
		case r.ObservedGeneration != generation:
			held = append(held, fmt.Sprintf("adapter %s (its last report is of generation %d, the order is at %d)",
				name, r.ObservedGeneration, generation))
		case r.Available.Status != True:
			why := r.Available.why()
			if why == "" {
				why = "no reason given"
			}
			held = append(held, fmt.Sprintf("adapter %s (Available=%s: %s)", name, r.Available.Status, why))
		}
	}
	return strings.Join(held, "; ")
}
