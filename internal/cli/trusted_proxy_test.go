package cli_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/cli"
)

// Finding 4 of the probe: a --trusted-proxy that is neither an address
// nor a CIDR stops `steward server` before it starts anything (exit 2,
// naming the value), also among good ones given comma-separated.
func TestServer_TrustedProxyThatDoesNotParseIsAStartUpError(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	var out, errOut bytes.Buffer
	code := cli.MainContext(t.Context(), []string{"server", "--dev", "--data-dir", dir,
		"--trusted-proxy", "10.0.0.0/8,192.0.2.7", "--trusted-proxy", "proxy.example"}, strings.NewReader(""), &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), `--trusted-proxy: "proxy.example" is neither an address nor a CIDR`) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 naming the bad --trusted-proxy", code, errOut.String())
	}
}
