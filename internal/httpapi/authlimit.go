package httpapi

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"net/netip"
	"strings"
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

// ErrTooManyAuthFailures answers a request whose credential failed to
// authenticate when that credential, or the client address, has failed too
// often (429 TOO_MANY_AUTH_FAILURES). A valid token is never answered it.
var ErrTooManyAuthFailures = errors.New("too many failed authentications")

// The limits a failure is counted against, as FailureLimiter.Fail names
// the one that refused it (and the auth failures metric labels it).
const (
	LimitNone       = "none"
	LimitCredential = "credential"
	LimitAddress    = "address"
)

// limitDetail says, in a 429's detail, which limit refused it.
var limitDetail = map[string]string{
	LimitCredential: "with this token",
	LimitAddress:    "from this address",
}

// FailureLimiter keeps token buckets that only failed authentications draw
// from: one per presented credential (a token id) and one per client
// address. A failure whose credential or address has run dry is answered
// 429 instead of 401. It is consulted only once the authenticator has said
// no, so a valid token is never refused, whatever its address or its id
// went through; what it bounds is how long a client sees 401s (the
// guessing signal) and, through its metric, how visible an attack is.
// It is safe for concurrent use.
type FailureLimiter struct {
	burst float64
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time // when buckets was last rid of its full ones
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxClients bounds the buckets kept; past it, full buckets are dropped,
// at most once per refill.
const maxClients = 10_000

// NewFailureLimiter allows burst failures at once per credential and per
// address (0: 20), refilled at one per every (0: a second).
func NewFailureLimiter(burst int, every time.Duration) *FailureLimiter {
	return &FailureLimiter{burst: float64(cmp.Or(burst, 20)), every: cmp.Or(every, time.Second), now: time.Now,
		buckets: map[string]*bucket{}}
}

// Fail counts a failed authentication against credential (none when "")
// and address. It returns the limit that refuses the failure (LimitNone
// when both had one to spare) and, when one did, how long until it has
// one again. A refused failure takes nothing: a client retrying at any
// rate sees one 401 per refill.
func (l *FailureLimiter) Fail(credential, address string) (limit string, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	limit = LimitNone
	for _, k := range []struct{ name, key string }{{LimitCredential, credential}, {LimitAddress, address}} {
		if k.key == "" {
			continue
		}
		if w := l.draw(k.name+" "+k.key, now); w > 0 {
			if limit == LimitNone {
				limit = k.name
			}
			wait = max(wait, w)
		}
	}
	return limit, wait
}

// draw takes one failure from key's bucket, or, when it has none to
// spare, returns how long until it has; the caller holds mu.
func (l *FailureLimiter) draw(key string, now time.Time) time.Duration {
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxClients && now.Sub(l.swept) >= l.every {
			l.swept = now
			for k, old := range l.buckets {
				if l.refill(old, now); old.tokens >= l.burst {
					delete(l.buckets, k)
				}
			}
		}
		if len(l.buckets) >= maxClients {
			// NOTE: credentials are the client's to make up, so a flood of
			// new ones must cost neither memory nor a sweep per request: a
			// new key goes uncounted until the next sweep frees room.
			return 0
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	l.refill(b, now)
	if b.tokens < 1 {
		return max(time.Duration((1-b.tokens)*float64(l.every)), time.Nanosecond)
	}
	b.tokens--
	return 0
}

// refill brings b to now; the caller holds mu.
func (l *FailureLimiter) refill(b *bucket, now time.Time) {
	b.tokens = math.Min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.every))
	b.at = now
}

// tokenPrefix starts every token the tokens package issues:
// "stw_<id>_<secret>".
const tokenPrefix = "stw_"

// credentialKey names the credential token presents, for counting its
// failures: a Steward token's id, so that every guess at one token's
// secret counts against that token; else the token's SHA-256 (never the
// token itself). It is "" for no token.
func credentialKey(token string) string {
	if token == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(token, tokenPrefix); ok {
		if id, _, ok := strings.Cut(rest, "_"); ok && id != "" {
			return "id:" + id
		}
	}
	sum := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// addressKey is the bucket of a client address: an IPv6 client counts by
// its /64, which one host is usually handed whole.
func addressKey(client string) string {
	addr, err := netip.ParseAddr(client)
	if err != nil || !addr.Is6() {
		return client
	}
	return netip.PrefixFrom(addr, 64).Masked().String()
}
