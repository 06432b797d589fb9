package background_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stewardhq/steward/internal/background"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type key struct{}

// TestLoop_RunsUntilStopWithTheStartContextsValues: fn's context keeps
// the start context's values but not its end, and Stop returns only once
// fn has returned.
func TestLoop_RunsUntilStopWithTheStartContextsValues(t *testing.T) {
	var l background.Loop
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	started := make(chan context.Context, 1)
	var returned atomic.Bool
	if err := l.Start(ctx, func(ctx context.Context) {
		started <- ctx
		<-ctx.Done()
		returned.Store(true)
	}); err != nil {
		t.Fatal(err)
	}
	cancel()
	runCtx := <-started
	if runCtx.Value(key{}) != "v" {
		t.Error("fn's context lost the start context's values")
	}
	select {
	case <-runCtx.Done():
		t.Fatal("fn's context ended with the start context")
	case <-time.After(50 * time.Millisecond):
	}
	if err := l.Stop(context.Background()); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if !returned.Load() {
		t.Error("Stop returned before fn did")
	}
}

func TestLoop_StopIsIdempotentAndSafeBeforeStart(t *testing.T) {
	var l background.Loop
	if err := l.Stop(context.Background()); err != nil {
		t.Fatalf("stop before start: %v", err)
	}
	if err := l.Start(context.Background(), func(ctx context.Context) { <-ctx.Done() }); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := l.Stop(context.Background()); err != nil {
			t.Fatalf("stop %d: %v", i+1, err)
		}
	}
}

func TestLoop_StartOnARunningLoopRunsNothing(t *testing.T) {
	var l background.Loop
	if err := l.Start(context.Background(), func(ctx context.Context) { <-ctx.Done() }); err != nil {
		t.Fatal(err)
	}
	defer l.Stop(context.Background())
	var ran atomic.Bool
	if err := l.Start(context.Background(), func(context.Context) { ran.Store(true) }); !errors.Is(err, background.ErrStarted) {
		t.Fatalf("second start: %v, want ErrStarted", err)
	}
	if err := l.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Error("a second Start ran its function")
	}
}

func TestLoop_StartsAgainAfterStop(t *testing.T) {
	var l background.Loop
	runs := make(chan int, 2)
	for i := range 2 {
		if err := l.Start(context.Background(), func(ctx context.Context) { runs <- i; <-ctx.Done() }); err != nil {
			t.Fatalf("start %d: %v", i+1, err)
		}
		if err := l.Stop(context.Background()); err != nil {
			t.Fatalf("stop %d: %v", i+1, err)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("ran %d times, want 2", len(runs))
	}
}

// TestLoop_StopWaitsNoLongerThanItsContext: a fn that does not heed its
// context holds Stop only until Stop's context ends; a later Stop waits for
// it again.
func TestLoop_StopWaitsNoLongerThanItsContext(t *testing.T) {
	var l background.Loop
	release := make(chan struct{})
	if err := l.Start(context.Background(), func(context.Context) { <-release }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stop: %v, want the context's deadline", err)
	}
	close(release)
	if err := l.Stop(context.Background()); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}
