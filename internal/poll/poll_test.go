package poll

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestUntil_ReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	calls := 0
	Until(t, "the third call", func() bool { calls++; return calls == 3 })
	if calls != 3 {
		t.Errorf("cond called %d times, want 3", calls)
	}
}

// fatalTB records Fatalf and, like testing.T, ends the goroutine.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestUntilWithin_FailsAtTheDeadline(t *testing.T) {
	t.Parallel()
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		UntilWithin(tb, 20*time.Millisecond, "never", func() bool { return false })
	}()
	<-done
	if want := "timed out after 20ms waiting until never"; tb.msg != want {
		t.Errorf("failure = %q, want %q", tb.msg, want)
	}
}
