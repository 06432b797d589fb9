package httpapi

import (
	"net/http"
	"net/netip"
	"testing"
)

// Finding 4 of the probe: the client address comes from X-Forwarded-For
// only when the peer is a trusted proxy, and then from its rightmost
// entry that is not a trusted proxy, so a client cannot write its way out
// of its limit.
func TestClientAddr_BelievesForwardedForOnlyFromTrustedProxies(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:1::/48")}
	cases := []struct {
		name    string
		proxies []netip.Prefix
		peer    string
		xff     []string
		want    string
		reason  string
	}{
		{name: "untrusted peer", proxies: trusted, peer: "198.51.100.9:4711", xff: []string{"203.0.113.1"},
			want: "198.51.100.9", reason: "a client that is no proxy of ours names itself in the header it likes"},
		{name: "no trusted proxies", peer: "10.0.0.1:4711", xff: []string{"203.0.113.1"},
			want: "10.0.0.1", reason: "without --trusted-proxy the header is ignored"},
		{name: "trusted peer", proxies: trusted, peer: "10.0.0.1:4711", xff: []string{"203.0.113.1"},
			want: "203.0.113.1", reason: "the proxy names the client it saw"},
		{name: "spoofed entries", proxies: trusted, peer: "10.0.0.1:4711", xff: []string{"1.2.3.4, 5.6.7.8, 203.0.113.1"},
			want: "203.0.113.1", reason: "the entries left of the proxy's are the client's to write"},
		{name: "chain of proxies", proxies: trusted, peer: "10.0.0.1:4711", xff: []string{"203.0.113.1, 10.0.0.2", "10.0.0.3"},
			want: "203.0.113.1", reason: "trusted hops are skipped, across header lines"},
		{name: "all trusted", proxies: trusted, peer: "10.0.0.1:4711", xff: []string{"10.0.0.2, 10.0.0.3"},
			want: "10.0.0.2", reason: "the farthest trusted hop is the client"},
		{name: "no header", proxies: trusted, peer: "10.0.0.1:4711",
			want: "10.0.0.1", reason: "the proxy itself asked"},
		{name: "garbage entry", proxies: trusted, peer: "10.0.0.1:4711", xff: []string{"203.0.113.1, junk, 10.0.0.2"},
			want: "10.0.0.2", reason: "past an entry that does not parse, the nearest trusted hop is all we know"},
		{name: "ports and IPv6", proxies: trusted, peer: "[2001:db8:1::5]:4711", xff: []string{"[2001:db8:2::7]:999, 2001:db8:1::6"},
			want: "2001:db8:2::7", reason: "entries may carry ports; IPv6 proxies are matched by prefix"},
		{name: "IPv4-mapped peer", proxies: trusted, peer: "[::ffff:10.0.0.1]:4711", xff: []string{"203.0.113.1:80"},
			want: "203.0.113.1", reason: "an IPv4-mapped peer is its IPv4 address"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &API{cfg: Config{TrustedProxies: tc.proxies}}
			r := &http.Request{RemoteAddr: tc.peer, Header: http.Header{}}
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := a.clientAddr(r); got != tc.want {
				t.Errorf("%s\nclientAddr = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}
