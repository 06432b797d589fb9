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
	"sync"
	"syscall"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// defaultPath is the PATH a process gets when the provider has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// process is one process the supervisor watches: one it started, the
// leader of its own session and so of its own process group, or one an
// earlier provider started and this one adopted (see Restore).
type process struct {
	pid int
	// startTime is the process's start time in clock ticks after boot, from
	// /proc/<pid>/stat: with the pid (and the boot id) it names the process,
	// so a recorded pid that the kernel has since given to another process
	// is not mistaken for it.
	startTime uint64
	// child says the process is a child of this OS process: wait4 reaps it
	// and tells how it exited. Any other process (one adopted from a
	// provider process that has died, whose children init took over) is
	// watched through /proc only, and its exit status is unknown.
	child bool
	// stderrFrom is how long stderr.log was when the process started, so
	// its last lines are its own (see stderrTail); 0 for an adopted one,
	// whose start is not known.
	stderrFrom int64
}

// exit is how a process ended.
type exit struct {
	// code is the exit status, or -1 when a signal killed the process.
	code   int
	signal syscall.Signal
	// unknown says the process ended but its exit status could not be
	// read: it was not this OS process's child, so another reaped it.
	unknown bool
}

// unknownExit is the exit of a process that ended while no provider could
// reap it.
var unknownExit = exit{code: -1, unknown: true}

// clean reports whether the process exited with status 0. An unknown exit
// is not clean: restart_policy on_failure restarts it.
func (e exit) clean() bool { return !e.unknown && e.code == 0 }

// String says how the process ended, for status messages.
func (e exit) String() string {
	switch {
	case e.unknown:
		return "ended, with an exit status nobody could read (it was not the provider's child)"
	case e.code < 0:
		return fmt.Sprintf("was killed by signal %d (%v)", int(e.signal), e.signal)
	}
	return fmt.Sprintf("exited with status %d", e.code)
}

// exitOf reads how a reaped child ended.
func exitOf(ws syscall.WaitStatus) exit {
	if ws.Signaled() {
		return exit{code: -1, signal: ws.Signal()}
	}
	return exit{code: ws.ExitStatus()}
}

// startProcess starts the command of s, the instance's spec, as member m:
// in m's directory, in a new session (so a new process group, without a
// controlling terminal), with stdout and stderr appended to the log files
// there. It returns once exec has succeeded, or the error that prevented
// it. Nothing waits on the process: the supervisor polls it (see poll), so
// a provider that stops can leave it running.
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
	var stderrFrom int64
	if fi, err := stderr.Stat(); err == nil {
		stderrFrom = fi.Size()
	}

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
	// Its own session, hence its own process group: stop signals reach
	// every process it forks, and a terminal's Ctrl-C (SIGINT to the
	// terminal's foreground group) or hang-up never reaches it, so it
	// outlives the provider's process when the provider stops.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	proc := &process{pid: cmd.Process.Pid, child: true, stderrFrom: stderrFrom}
	// The supervisor reaps the child itself (wait4 in poll); os/exec's
	// handle is not needed.
	_ = cmd.Process.Release()
	// Until it is reaped the child's /proc entry stays, a zombie's too.
	if st, err := readStat(proc.pid); err == nil {
		proc.startTime = st.startTime
	}
	return proc, nil
}

// poll reports, without blocking, whether the process has ended, and how.
// A child is reaped (wait4), which tells its exit status; any other
// process has ended once /proc no longer shows it alive with its start
// time.
func (proc *process) poll() (exit, bool) {
	if proc.child {
		for {
			var ws syscall.WaitStatus
			wpid, err := syscall.Wait4(proc.pid, &ws, syscall.WNOHANG, nil)
			switch {
			case errors.Is(err, syscall.EINTR):
				continue
			case err == nil && wpid == proc.pid:
				return exitOf(ws), true
			case err == nil:
				return exit{}, false // still running
			}
			break
		}
		// ECHILD: not a child after all. Watch it as any other process.
		proc.child = false
	}
	if sameAndAlive(proc.pid, proc.startTime) {
		return exit{}, false
	}
	return unknownExit, true
}

// sameAndAlive reports whether pid is the process that started at
// startTime and has not ended (a zombie has). When /proc cannot tell (it
// answers something other than "no such process"), signal 0 decides: a
// process wrongly taken for dead would be started twice.
func sameAndAlive(pid int, startTime uint64) bool {
	st, err := readStat(pid)
	switch {
	case err == nil:
		return st.startTime == startTime && st.state != 'Z' && st.state != 'X'
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ESRCH):
		return false
	}
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// stderrTailBytes is how much of the end of stderr.log stderrTail reads:
// enough for provider.MaxDetailLines lines of provider.MaxDetailLen bytes.
const stderrTailBytes = 4 * provider.MaxDetailLen

// withStderr adds to why, the message of member m's process that failed
// for good, the last lines the process wrote to stderr (after offset from
// of stderr.log), as a failure detail: "…; stderr: <lines>".
func withStderr(why string, m *member, from int64) string {
	if tail := stderrTail(filepath.Join(m.dir, "stderr.log"), from); tail != "" {
		return why + "; stderr: " + tail
	}
	return why
}

// stderrTail is the failure detail (provider.Detail) of what was written
// to the log file name after offset from: its last lines, bounded. A file
// that cannot be read gives "".
func stderrTail(name string, from int64) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	start := max(from, fi.Size()-stderrTailBytes)
	if start >= fi.Size() {
		return ""
	}
	b := make([]byte, fi.Size()-start)
	n, _ := f.ReadAt(b, start)
	return provider.Detail(string(b[:n]))
}

// openLog opens a log file for appending, so restarts keep earlier output.
func openLog(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return f, nil
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

// procStat is what the provider reads of /proc/<pid>/stat.
type procStat struct {
	state byte
	ppid  int
	pgrp  int
	// startTime is when the process started, in clock ticks after boot.
	startTime uint64
}

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (procStat, error) {
	if pid <= 0 {
		return procStat{}, fmt.Errorf("no process %d", pid)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	st, ok := parseProcStat(b)
	if !ok {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return st, nil
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

// parseProcStat reads a whole /proc/<pid>/stat line, start time included
// (field 22, the 20th after comm).
func parseProcStat(stat []byte) (procStat, bool) {
	state, pgrp, ok := parseStat(stat)
	if !ok {
		return procStat{}, false
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 20 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return procStat{}, false
	}
	return procStat{state: state, ppid: ppid, pgrp: pgrp, startTime: start}, true
}

// bootID is this boot's id (/proc/sys/kernel/random/boot_id): a start time
// in clock ticks names a process only within one boot.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// find looks for the process recorded as pid with startTime during boot
// boot. A live one is returned to adopt; one that has ended is returned as
// its exit (known only for a zombie child of this OS process, which find
// reaps), gone set.
func find(pid int, startTime uint64, boot string) (proc *process, e exit, gone bool) {
	if pid <= 0 || boot != bootID() {
		return nil, unknownExit, true
	}
	st, err := readStat(pid)
	if err != nil || st.startTime != startTime {
		return nil, unknownExit, true
	}
	proc = &process{pid: pid, startTime: startTime, child: st.ppid == os.Getpid()}
	if e, ended := proc.poll(); ended {
		return nil, e, true
	}
	return proc, exit{}, false
}
