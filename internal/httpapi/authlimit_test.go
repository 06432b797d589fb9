package httpapi

import (
	"strconv"
	"testing"
	"time"
)

// The failure limits count a Steward token by its id, whatever secret is
// guessed, any other token by its hash, and an IPv6 client by its /64.
func TestFailureLimiter_CountsPerCredentialAndPerAddress(t *testing.T) {
	l := NewFailureLimiter(2, 1<<62)
	fail := func(token, addr string) string {
		limit, _ := l.Fail(credentialKey(token), addressKey(addr))
		return limit
	}
	for i, want := range []string{LimitNone, LimitNone, LimitCredential} {
		if got := fail("stw_abc_guess"+string(rune('a'+i)), []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}[i]); got != want {
			t.Errorf("guess %d at one token id from a new address: refused by %q, want %q", i+1, got, want)
		}
	}
	for i, want := range []string{LimitNone, LimitNone, LimitAddress} {
		token := []string{"stw_x1_s", "not-ours", ""}[i]
		if got := fail(token, []string{"2001:db8::1", "2001:db8::2", "2001:db8:0:0:ffff::3"}[i]); got != want {
			t.Errorf("failure %d from one /64 with a new credential: refused by %q, want %q", i+1, got, want)
		}
	}
	if got := fail("stw_fresh_s", "2001:db8:0:1::1"); got != LimitNone {
		t.Errorf("the next /64 is refused by %q", got)
	}
	limit, wait := l.Fail(credentialKey("stw_abc_again"), "192.0.2.9")
	if limit != LimitCredential || wait <= 0 {
		t.Errorf("a dry credential: limit %q, wait %v; want %q and a wait", limit, wait, LimitCredential)
	}
}

// A flood of made-up credentials costs neither unbounded memory nor a
// sweep per request: past maxClients a new key goes uncounted until a
// sweep, at most once per refill, frees room; known keys stay limited.
func TestFailureLimiter_BoundsItsBuckets(t *testing.T) {
	now := time.Unix(0, 0)
	l := NewFailureLimiter(1, time.Hour)
	l.now = func() time.Time { return now }
	l.Fail("", "known")
	for i := range maxClients {
		l.Fail("", strconv.Itoa(i))
	}
	if n := len(l.buckets); n != maxClients {
		t.Fatalf("%d buckets, want the bound %d", n, maxClients)
	}
	for i := range 2 {
		if got, _ := l.Fail("", "new"); got != LimitNone {
			t.Errorf("new key's failure %d past the bound refused by %q, want uncounted", i+1, got)
		}
	}
	if got, _ := l.Fail("", "known"); got != LimitAddress {
		t.Errorf("a known key past the bound is refused by %q, want %q", got, LimitAddress)
	}
	now = now.Add(time.Hour)
	l.Fail("", "new")
	if got, _ := l.Fail("", "new"); got != LimitAddress {
		t.Errorf("after a sweep the new key is refused by %q, want %q", got, LimitAddress)
	}
}
