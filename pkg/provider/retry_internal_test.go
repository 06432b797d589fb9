package provider

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestRetryPolicy_Wait(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{}.withDefaults(30*time.Second, 0)
	tests := []struct {
		n      int
		j      float64
		want   time.Duration
		reason string
	}{
		{n: 0, j: 0.5, want: 200 * time.Millisecond, reason: "the first wait is Initial"},
		{n: 1, j: 0.5, want: 400 * time.Millisecond, reason: "each wait doubles"},
		{n: 3, j: 0.5, want: 1600 * time.Millisecond, reason: "each wait doubles"},
		{n: 0, j: 0, want: 160 * time.Millisecond, reason: "jitter takes off up to 20%"},
		{n: 0, j: 0.75, want: 220 * time.Millisecond, reason: "jitter adds up to 20%"},
		{n: 10, j: 0.5, want: 30 * time.Second, reason: "waits stop growing at Max"},
		{n: 10, j: 0.999999, want: 30 * time.Second, reason: "jitter never passes Max"},
		{n: 10, j: 0, want: 24 * time.Second, reason: "at Max, jitter still spreads the waits"},
		{n: 1000, j: 0.5, want: 30 * time.Second, reason: "no overflow after many retries"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d_%v", tc.n, tc.j), func(t *testing.T) {
			t.Parallel()
			if got := p.wait(tc.n, tc.j); got != tc.want {
				t.Errorf("%s\nwait(%d, %v) = %s, want %s", tc.reason, tc.n, tc.j, got, tc.want)
			}
		})
	}
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("x: %w", ErrTimeout), true},
		{fmt.Errorf("x: %w", ErrUnreachable), true},
		{&ResponseError{StatusCode: 500}, true},
		{&ResponseError{StatusCode: 503}, true},
		{&ResponseError{StatusCode: 429}, true},
		{&ResponseError{StatusCode: 408}, true},
		{&ResponseError{StatusCode: 400}, false},
		{&ResponseError{StatusCode: 409}, false},
		{&ResponseError{StatusCode: 307}, false},
		{fmt.Errorf("%w: %w", ErrUnknownInstance, &ResponseError{StatusCode: 404}), false},
		{ErrInvalidResponse, false},
		{errors.New("other"), false},
	}
	for _, tc := range tests {
		if got := retryable(tc.err); got != tc.want {
			t.Errorf("retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("%w: %w", ErrUnknownInstance, &ResponseError{StatusCode: 404}), true},
		{&ResponseError{StatusCode: 400}, true},
		{&ResponseError{StatusCode: 403}, true},
		{fmt.Errorf("x: %w", ErrInvalidReport), true},
		{&ResponseError{StatusCode: 408}, false},
		{&ResponseError{StatusCode: 429}, false},
		{&ResponseError{StatusCode: 503}, false},
		{fmt.Errorf("x: %w", ErrUnreachable), false},
		{errors.New("other"), false},
	}
	for _, tc := range tests {
		if got := Refused(tc.err); got != tc.want {
			t.Errorf("Refused(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
