// Package poll is polling with a deadline for tests; production code never
// imports it (internal/server's import test enforces that).
//
// Prefer a test signal when the code under test can give one (a channel, a
// recorded call); poll what a test can only observe from outside, such as an
// HTTP answer or a file a process writes.
package poll

import (
	"testing"
	"time"
)

// Timeout is how long [Until] waits before it fails the test. It is generous
// because it is only reached when the test fails anyway: a slow CI machine
// must not fail a test that would pass.
const Timeout = 30 * time.Second

// interval is the time between two checks.
const interval = 10 * time.Millisecond

// Until calls cond, then again every few milliseconds, until it returns
// true, and fails tb with Fatalf if that has not happened within [Timeout].
// what says what is awaited, as the end of "waiting until …" ("the provider
// is unavailable"). cond runs on the calling goroutine, so it may use tb.
func Until(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	UntilWithin(tb, Timeout, what, cond)
}

// UntilWithin is [Until] with its own timeout, for a package whose waits
// share a tighter bound.
func UntilWithin(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			tb.Fatalf("timed out after %v waiting until %s", timeout, what)
		case <-tick.C:
		}
	}
}
