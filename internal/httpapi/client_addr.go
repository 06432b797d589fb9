package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr is the address of the client a request comes from, without
// its port. It is the peer's, unless the peer is one of
// Config.TrustedProxies: then it is the rightmost X-Forwarded-For entry
// that is not itself a trusted proxy. Entries left of that one are the
// client's to write, so they are never believed; an entry that does not
// parse leaves the nearest trusted hop as the client.
func (a *API) clientAddr(r *http.Request) string {
	peer, ok := parseHop(r.RemoteAddr)
	if !ok {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			return r.RemoteAddr
		}
		return host
	}
	if !a.trusted(peer) {
		return peer.String()
	}
	client := peer
	hops := forwardedFor(r.Header)
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client = hop
		if !a.trusted(hop) {
			break
		}
	}
	return client.String()
}

// trusted reports whether addr is one of Config.TrustedProxies.
func (a *API) trusted(addr netip.Addr) bool {
	for _, p := range a.cfg.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// forwardedFor is the X-Forwarded-For entries of every such header line,
// nearest hop last.
func forwardedFor(h http.Header) []string {
	var hops []string
	for _, line := range h.Values("X-Forwarded-For") {
		for hop := range strings.SplitSeq(line, ",") {
			hops = append(hops, strings.TrimSpace(hop))
		}
	}
	return hops
}

// parseHop reads an address, with or without a port ("203.0.113.7",
// "203.0.113.7:4711", "[2001:db8::1]:4711"), an IPv4-mapped IPv6 one as
// IPv4 and without a zone.
func parseHop(s string) (netip.Addr, bool) {
	addr, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return netip.Addr{}, false
		}
		addr = ap.Addr()
	}
	return addr.Unmap().WithZone(""), true
}
