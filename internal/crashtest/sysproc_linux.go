package crashtest

import "syscall"

// sysProcAttr makes the kernel kill the server if the harness dies first,
// so no server outlives a test that was killed itself.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
