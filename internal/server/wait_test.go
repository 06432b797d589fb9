package server_test

import (
	"testing"
	"time"
)

// deadline bounds a wait in a test: long enough for a loaded CI machine,
// short enough that a broken test fails rather than hangs the suite.
func deadline(t *testing.T) <-chan time.Time {
	t.Helper()
	return time.After(20 * time.Second)
}
