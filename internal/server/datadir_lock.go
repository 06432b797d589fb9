package server

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// lockFileName is the file in the data directory that the running server
// holds an OS lock on.
const lockFileName = "steward.lock"

// dataDirLock is one server's claim on its data directory: an exclusive
// flock(2) on <data-dir>/steward.lock, so a second `steward server` on the
// same directory (sharing its SQLite database, NATS store and processes)
// refuses to start. The kernel drops the lock when the process dies, kill -9
// included, so a crash leaves no stale lock behind; the pid written in the
// file only names the holder in the second server's error. The file is
// opened close-on-exec (as os.OpenFile always does), so the processes the
// in-process provider starts never inherit, and so never prolong, the lock.
type dataDirLock struct{ f *os.File }

// errLocked is what tryLock returns when another open file holds the lock.
var errLocked = errors.New("locked")

// lockDataDir creates dir if needed and takes its lock without waiting. A
// directory another server holds is an error naming that server's pid.
func lockDataDir(dir string) (*dataDirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFileName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := tryLock(f); err != nil {
		holder := holderPID(f)
		_ = f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("data directory %s is in use by another steward server (%s); "+
				"stop it or use another --data-dir", dir, holder)
		}
		return nil, fmt.Errorf("data directory %s: lock %s: %w", dir, lockFileName, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(pid, 0)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("data directory %s: write %s: %w", dir, lockFileName, err)
	}
	return &dataDirLock{f: f}, nil
}

// holderPID reads the pid the holder wrote into the lock file, as "pid N".
// The holder writes it just after locking, so it may not be there yet.
func holderPID(f *os.File) string {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	if pid, err := strconv.Atoi(string(bytes.TrimSpace(buf[:n]))); err == nil && pid > 0 {
		return "pid " + strconv.Itoa(pid)
	}
	return "pid unknown"
}

// release empties the lock file (its pid is no longer running a server) and
// closes it, which drops the lock. It is safe on a nil lock.
func (l *dataDirLock) release() error {
	if l == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	return l.f.Close()
}
