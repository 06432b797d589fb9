package httpapi

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"time"
)

// RetryAfterError is a refusal the client may try again after Seconds.
type RetryAfterError struct {
	Seconds int
	Err     error
}

func (e *RetryAfterError) Error() string { return e.Err.Error() }
func (e *RetryAfterError) Unwrap() error { return e.Err }

// ErrTooManyAuthFailures answers a client that failed to authenticate too
// often (429 TOO_MANY_AUTH_FAILURES).
var ErrTooManyAuthFailures = fmt.Errorf("too many failed authentications from this address")

// FailureLimiter is a token bucket per client address that only failures
// draw from: a client that keeps presenting bad tokens is refused for a
// while before its token is even looked at, which bounds guessing and the
// database reads that bad tokens cause. Good requests never draw from it.
type FailureLimiter struct {
	burst float64
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxClients bounds the addresses tracked; past it, full buckets are dropped.
const maxClients = 10_000

// NewFailureLimiter allows burst failures at once per address, refilled at
// one per every.
func NewFailureLimiter(burst int, every time.Duration) *FailureLimiter {
	return &FailureLimiter{burst: float64(burst), every: every, now: time.Now, buckets: map[string]*bucket{}}
}

// refill brings b to now; the caller holds mu.
func (l *FailureLimiter) refill(b *bucket, now time.Time) {
	b.tokens = math.Min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.every))
	b.at = now
}

// Check refuses client while its bucket is empty.
func (l *FailureLimiter) Check(client string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[client]
	if !ok {
		return nil
	}
	l.refill(b, l.now())
	if b.tokens >= 1 {
		return nil
	}
	wait := time.Duration((1 - b.tokens) * float64(l.every))
	return &RetryAfterError{Seconds: int(math.Ceil(wait.Seconds())), Err: ErrTooManyAuthFailures}
}

// Fail counts a failed authentication by client.
func (l *FailureLimiter) Fail(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[client]
	if !ok {
		if len(l.buckets) >= maxClients {
			for c, old := range l.buckets {
				if l.refill(old, now); old.tokens >= l.burst {
					delete(l.buckets, c)
				}
			}
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[client] = b
	}
	l.refill(b, now)
	b.tokens = math.Max(0, b.tokens-1)
}

// clientAddr is the request's peer address without its port. Forwarded
// headers are not trusted: Steward is not told which proxies it sits behind.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
