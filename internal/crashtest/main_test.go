package crashtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/stewardhq/steward/internal/kubetest"
)

// TestMain removes the binary TestCrash built, stops the Kubernetes API
// server TestCluster started, and fails on leaked
// goroutines.
func TestMain(m *testing.M) {
	code := m.Run()
	kubetest.StopShared()
	if builtBin != "" {
		_ = os.RemoveAll(filepath.Dir(builtBin))
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
