//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package server

import "os"

// tryLock does not lock on systems without flock(2): there two servers on
// one data directory are not detected.
func tryLock(*os.File) error { return nil }
