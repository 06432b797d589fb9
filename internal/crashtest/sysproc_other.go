//go:build !linux

package crashtest

import "syscall"

// sysProcAttr has nothing to add outside Linux: the harness stops the
// server on every path it returns by.
func sysProcAttr() *syscall.SysProcAttr { return nil }
