package reconcile

import "time"

// SetSweepAfter changes how long a request waits before the sweep takes
// it, for tests that hold a reconcile longer than SweepAfter on a slow
// machine. Call it before Start.
func (q *Queue) SetSweepAfter(d time.Duration) { q.sweepAfter = d }
