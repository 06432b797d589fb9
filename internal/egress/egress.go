// Package egress decides which addresses Steward may call providers at, so
// that a registered endpoint cannot turn Steward into a proxy to the cloud's
// metadata service or the networks behind it (server-side request forgery).
//
// A [Policy] is checked twice: on a registration's endpoint host, which
// refuses what is plainly wrong at once ([Policy.CheckHost]), and on every
// connection Steward opens to a provider, after name resolution
// ([Policy.DialContext]), since a name may resolve to another address
// tomorrow than it did at registration. The second check is the defence;
// the first one is a clear answer.
//
// Its rules, in order:
//
//   - never: the unspecified addresses (0.0.0.0/8, ::), link-local ones
//     (169.254.0.0/16, which holds the cloud metadata service at
//     169.254.169.254, and fe80::/10), multicast and broadcast, and the
//     other clouds' metadata addresses (fd00:ec2::254, 100.100.100.200,
//     168.63.129.16); nor the metadata service's names
//     (metadata.google.internal and the like);
//   - private and loopback ranges (10/8, 172.16/12, 192.168/16, 127/8, ::1,
//     fc00::/7, 100.64/10) only inside a prefix of the allow list, which
//     defaults to loopback ([DefaultAllow]);
//   - any other (public) address.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// ErrRefused is returned (wrapped) for an address or host Steward does not
// call providers at.
var ErrRefused = errors.New("address refused by Steward's provider address policy")

// DefaultAllow is the allow list of a nil one: loopback, where a provider
// beside the server (the single-host setup, --dev's in-process provider)
// listens.
var DefaultAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// never holds the ranges no allow list opens.
var never = prefixes("0.0.0.0/8", "::/128", "169.254.0.0/16", "fe80::/10", "224.0.0.0/4", "ff00::/8",
	"255.255.255.255/32",
	// Metadata services outside link-local: AWS's IPv6 one, Alibaba's,
	// Azure's wire server.
	"fd00:ec2::254/128", "100.100.100.200/32", "168.63.129.16/32")

// restricted holds the ranges only an allow list opens: loopback, private,
// unique-local and carrier-grade NAT addresses.
var restricted = prefixes("127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
	"fc00::/7", "100.64.0.0/10")

// metadataNames are the names of cloud metadata services, compared in
// lower case without a trailing dot.
var metadataNames = map[string]bool{
	"metadata":                   true,
	"metadata.google.internal":   true,
	"metadata.goog":              true,
	"metadata.azure.internal":    true,
	"instance-data":              true,
	"instance-data.ec2.internal": true,
	"metadata.tencentyun.com":    true,
	"metadata.oraclecloud.com":   true,
}

// Policy is the set of addresses Steward may call providers at. The zero
// value is not usable; build one with [New]. It is safe for concurrent use.
type Policy struct {
	allow []netip.Prefix
}

// New returns the policy that opens allow's prefixes of the restricted
// ranges; nil allow is [DefaultAllow]. An empty, non-nil allow opens none.
func New(allow []netip.Prefix) *Policy {
	if allow == nil {
		allow = DefaultAllow
	}
	return &Policy{allow: allow}
}

// Allow returns the policy's allow list.
func (p *Policy) Allow() []netip.Prefix { return p.allow }

// CheckAddr returns an error wrapping [ErrRefused] when a is an address
// Steward does not call.
func (p *Policy) CheckAddr(a netip.Addr) error {
	a = a.Unmap()
	if !a.IsValid() || contains(never, a) {
		return fmt.Errorf("%w: %s is never called", ErrRefused, a)
	}
	if contains(restricted, a) && !contains(p.allow, a) {
		return fmt.Errorf("%w: %s is private or loopback, outside --provider-allow-cidr", ErrRefused, a)
	}
	return nil
}

// CheckHost checks a URL's host (a name or an IP literal, without port or
// brackets) before any call: an IP literal as [Policy.CheckAddr] does, a
// metadata service's name always refused. Any other name passes; where it
// leads is checked when connecting.
func (p *Policy) CheckHost(host string) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if metadataNames[h] {
		return fmt.Errorf("%w: %s is a cloud metadata service", ErrRefused, host)
	}
	if a, err := netip.ParseAddr(strings.SplitN(h, "%", 2)[0]); err == nil {
		return p.CheckAddr(a)
	}
	return nil
}

// DialContext wraps dial (a net.Dialer's DialContext, whose Control it must
// not set) so that it connects to allowed addresses only: dial resolves
// the address's name as usual, and each address it would connect to is
// checked before it connects. A refusal's error wraps [ErrRefused] and
// names the address asked for, not what it resolved to.
func (p *Policy) DialContext(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	guarded := *d
	guarded.Control = p.control
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := guarded.DialContext(ctx, network, address)
		if errors.Is(err, ErrRefused) {
			return nil, fmt.Errorf("dial %s: %w", address, ErrRefused)
		}
		return conn, err
	}
}

// control is a net.Dialer's Control: address is the resolved ip:port.
func (p *Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s is not an IP address", ErrRefused, address)
	}
	return p.CheckAddr(ap.Addr())
}

func contains(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func prefixes(cidrs ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		out[i] = netip.MustParsePrefix(c)
	}
	return out
}
