package server

import (
	"context"
	"testing"
	"time"
)

// The resync loop polls from the SPRM's ResyncAfter with its default
// applied: once a second by default, not every 50 ms (a write transaction
// each) as it did from the configuration's zero; a short ResyncAfter still
// polls at a quarter of it.
func TestResyncInterval_FollowsTheResolvedResyncAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		after, want time.Duration
	}{{0, time.Second}, {120 * time.Millisecond, 50 * time.Millisecond}, {2 * time.Second, 500 * time.Millisecond}} {
		s, err := New(Config{Dev: true, DataDir: t.TempDir(), Listen: "127.0.0.1:0", ResyncAfter: tc.after})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := s.resyncInterval()
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("ResyncAfter %v: the resync loop polls every %v, want %v", tc.after, got, tc.want)
		}
	}
}
