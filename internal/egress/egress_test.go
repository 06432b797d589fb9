package egress_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/egress"
)

// Finding 5 (SSRF): which hosts a registration may name, by default and
// with an allow list that opens the cluster's range.
func TestPolicy_CheckHost(t *testing.T) {
	t.Parallel()
	cluster := []netip.Prefix{netip.MustParsePrefix("10.96.0.0/12"), netip.MustParsePrefix("fd00:ec2::254/128"),
		netip.MustParsePrefix("169.254.0.0/16")}
	for _, tc := range []struct {
		host                 string
		byDefault, inCluster bool // allowed?
	}{
		{"provider.example.com", true, true}, // a name: checked when connecting
		{"203.0.113.7", true, true},
		{"2001:db8::1", true, true},
		{"127.0.0.1", true, false},
		{"::1", true, false},
		{"::ffff:127.0.0.1", true, false},
		{"10.100.0.5", false, true},
		{"10.0.0.5", false, false},
		{"172.16.0.1", false, false},
		{"192.168.1.1", false, false},
		{"100.64.0.1", false, false},
		{"fd12::1", false, false},
		// Never, whatever the allow list says.
		{"169.254.169.254", false, false},
		{"::ffff:169.254.169.254", false, false},
		{"fe80::1", false, false},
		{"fe80::1%eth0", false, false},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"fd00:ec2::254", false, false},
		{"100.100.100.200", false, false},
		{"metadata.google.internal", false, false},
		{"METADATA.google.internal.", false, false},
		{"metadata", false, false},
	} {
		for _, c := range []struct {
			p    *egress.Policy
			want bool
		}{{egress.New(nil), tc.byDefault}, {egress.New(cluster), tc.inCluster}} {
			err := c.p.CheckHost(tc.host)
			if (err == nil) != c.want || (err != nil && !errors.Is(err, egress.ErrRefused)) {
				t.Errorf("CheckHost(%q) with allow %v = %v, want allowed %v", tc.host, c.p.Allow(), err, c.want)
			}
		}
	}
}

// Finding 5 (SSRF): the check that counts is on the address a name resolves
// to, when connecting. localhost resolves to loopback without DNS; with an
// allow list that leaves loopback out, no connection is made, and the
// error names the address asked for, not the one it resolved to.
func TestPolicy_DialContextRefusesAResolvedAddress(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	dial := egress.New([]netip.Prefix{}).DialContext(&net.Dialer{})
	_, err = dial(ctx, "tcp", "localhost:"+port)
	if !errors.Is(err, egress.ErrRefused) {
		t.Fatalf("dial localhost with loopback not allowed: %v, want ErrRefused", err)
	}
	if strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "::1") {
		t.Errorf("the refusal %q names the resolved address", err)
	}

	c, err := egress.New(nil).DialContext(&net.Dialer{})(ctx, "tcp", "localhost:"+port)
	if err != nil {
		t.Fatalf("dial localhost with loopback allowed: %v", err)
	}
	c.Close()
	select {
	case <-accepted:
	case <-ctx.Done():
		t.Fatal("the allowed dial was not accepted")
	}
	select {
	case <-accepted:
		t.Error("the refused dial reached the listener")
	default:
	}
}
