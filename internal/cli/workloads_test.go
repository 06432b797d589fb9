package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// killWorkloadsAtCleanup kills, when the test ends, every process whose
// working directory lies under dir: the process provider's workloads
// outlive the server by design (it re-adopts them on start), and an order
// the test force-deleted or left running would otherwise keep its process
// after the test. Register it before starting the server, so that it runs
// after the server is gone. It does nothing where /proc is missing.
func killWorkloadsAtCleanup(t *testing.T, dir string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		root = dir
	}
	t.Cleanup(func() {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
			if err != nil {
				continue
			}
			cwd = strings.TrimSuffix(cwd, " (deleted)")
			if cwd == root || strings.HasPrefix(cwd, root+string(filepath.Separator)) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}
