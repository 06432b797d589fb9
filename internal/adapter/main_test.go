package adapter

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/stewardhq/steward/internal/kubetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kubetest.StopShared()
	if code == 0 {
		// client-go keeps connections to the shared cluster's API server
		// alive, and klog runs a flush daemon; neither is ours to stop.
		if err := goleak.Find(kubetest.LeakOptions()...); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
