package processprovider

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// defaultPath is the PATH a process gets when the provider has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// process is one started process, the leader of its own process group.
type process struct {
	pid int
	// done delivers the exit once cmd.Wait returns; its waiter goroutine
	// ends then. The supervisor always receives from it before moving on.
	done chan exit
}

// exit is how a process ended.
type exit struct {
	// code is the exit status, or -1 when a signal killed the process.
	code   int
	signal syscall.Signal
}

// clean reports whether the process exited with status 0.
func (e exit) clean() bool { return e.code == 0 }

// String says how the process ended, for status messages.
func (e exit) String() string {
	if e.code < 0 {
		return fmt.Sprintf("was killed by signal %d (%v)", int(e.signal), e.signal)
	}
	return fmt.Sprintf("exited with status %d", e.code)
}

// startProcess starts the command of s, the instance's spec, as member m:
// in m's directory, in a new process group, with stdout and stderr appended
// to the log files there. It returns once exec has succeeded, or the error
// that prevented it.
func startProcess(m *member, s spec) (*process, error) {
	if err := os.MkdirAll(m.dir, 0o750); err != nil {
		return nil, fmt.Errorf("create work dir: %w", err)
	}
	stdout, err := openLog(filepath.Join(m.dir, "stdout.log"))
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := openLog(filepath.Join(m.dir, "stderr.log"))
	if err != nil {
		return nil, err
	}
	defer stderr.Close()

	// NOTE: exec.Command resolves a bare command name with the provider's
	// PATH, not with a PATH set in spec.process.env.
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Dir = m.dir
	// A fixed base, not the provider's environment, which may hold
	// credentials; the spec's entries come last and so win (exec keeps the
	// last of duplicate keys).
	env := []string{"PATH=" + cmp.Or(os.Getenv("PATH"), defaultPath), "HOME=" + m.dir}
	env = append(env, m.env...)
	cmd.Env = append(env, s.env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr // *os.File: the child writes directly, no copy goroutines
	// Its own process group, so stop signals reach every process it forks.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	proc := &process{pid: cmd.Process.Pid, done: make(chan exit, 1)}
	go func() {
		_ = cmd.Wait() // the exit is read from ProcessState
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		e := exit{code: ws.ExitStatus()}
		if ws.Signaled() {
			e = exit{code: -1, signal: ws.Signal()}
		}
		proc.done <- e
	}()
	return proc, nil
}

// openLog opens a log file for appending, so restarts keep earlier output.
func openLog(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return f, nil
}

// stop ends the process group: SIGTERM, then SIGKILL once grace has passed
// or hurry is closed, whichever comes first. It returns once the leader has
// been reaped and the rest of its group killed (see killGroup).
func (proc *process) stop(grace time.Duration, hurry <-chan struct{}) (exit, error) {
	proc.signalGroup(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	var e exit
	select {
	case e = <-proc.done:
	case <-timer.C:
		proc.signalGroup(syscall.SIGKILL)
		e = <-proc.done
	case <-hurry:
		proc.signalGroup(syscall.SIGKILL)
		e = <-proc.done
	}
	return e, proc.killGroup()
}

// groupGoneWait bounds how long killGroup waits for the group to empty after
// SIGKILL, which takes effect within milliseconds unless a member is stuck in
// the kernel.
const groupGoneWait = 2 * time.Second

// killGroup kills what is left of the group once its leader has exited (an
// instance's processes live and die together, as in a container) and waits
// until the group is empty, so that "gone" means the whole tree. It gives up
// after groupGoneWait.
func (proc *process) killGroup() error {
	proc.signalGroup(syscall.SIGKILL)
	deadline := time.NewTimer(groupGoneWait)
	defer deadline.Stop()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if !groupHasLiveMember(proc.pid) {
			return nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return fmt.Errorf("process group %d not empty %v after SIGKILL", proc.pid, groupGoneWait)
		}
	}
}

// signalGroup sends sig to the whole process group. An error can only be
// ESRCH, a group already empty, which is what we want.
//
// NOTE: the group id is the leader's pid. While any member lives the kernel
// keeps that id allocated, so the signal cannot reach a stranger; once the
// group is empty the number could only be reused after pids wrap around.
func (proc *process) signalGroup(sig syscall.Signal) {
	_ = syscall.Kill(-proc.pid, sig)
}

// groupHasLiveMember reports whether process group pgid has a member that is
// not a zombie. Killed members orphaned by their leader are reaped by init,
// which may take its time; until then signal 0 still finds them, so the
// members' states are read from /proc. Without /proc it answers by signal 0
// alone.
func groupHasLiveMember(pgid int) bool {
	// Signal 0 checks for members without sending anything.
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if state, pgrp, ok := parseStat(stat); ok && pgrp == pgid && state != 'Z' {
			return true
		}
	}
	return false
}

// processAlive reports whether process pid exists and is not a zombie: a
// killed process stays a zombie until its supervisor reaps it.
func processAlive(pid int) bool {
	if pid <= 0 || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) // without /proc, signal 0 decides
	}
	state, _, ok := parseStat(stat)
	return ok && state != 'Z'
}

// parseStat returns the state and process group of a /proc/<pid>/stat line:
// "pid (comm) state ppid pgrp ...", where comm may hold spaces and ')'.
func parseStat(stat []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(f[2])
	return f[0][0], pgrp, err == nil
}
