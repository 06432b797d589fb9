package cli_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/cli"
)

// Finding 5 (SSRF): --provider-allow-cidr, and STEWARD_PROVIDER_ALLOW_CIDR
// (comma-separated), take CIDRs; anything else is a usage error before
// the server starts (under a cancelled ctx, so a server that did start
// would stop at once).
func TestServer_ProviderAllowCIDRTakesCIDRsOnly(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct{ flag, env string }{
		{flag: "10.0.0.0/8,nope"},
		{env: "10.0.0.0/8,10.1.2.3"},
	} {
		if tc.env != "" {
			t.Setenv("STEWARD_PROVIDER_ALLOW_CIDR", tc.env)
		}
		args := []string{"server", "--data-dir", filepath.Join(t.TempDir(), "data"), "--listen", "127.0.0.1:0"}
		if tc.flag != "" {
			args = append(args, "--provider-allow-cidr", tc.flag)
		}
		var out, errOut bytes.Buffer
		code := cli.MainContext(ctx, args, strings.NewReader(""), &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), "--provider-allow-cidr: ") || !strings.Contains(errOut.String(), "is not a CIDR") {
			t.Errorf("%+v: exit %d, stderr %s; want 2 saying --provider-allow-cidr takes CIDRs", tc, code, errOut.String())
		}
	}
}
