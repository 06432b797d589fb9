package crashtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// serverProc is the Steward server under test: one child process at a time
// (an incarnation), all of them on the same data and port, all logging to
// one file. Its methods are safe for concurrent use.
type serverProc struct {
	bin     string
	args    []string
	env     []string
	logPath string
	base    string
	hc      *http.Client

	mu sync.Mutex
	// cmd is the current incarnation, nil before the first start; exited is
	// closed when it has exited and been reaped.
	cmd    *exec.Cmd
	exited chan struct{}
	// killed is set when the harness itself ended the current incarnation.
	killed bool
	// n counts the incarnations started.
	n int
	// unexpected records each incarnation that exited without being killed.
	unexpected []string
	// exitErr is how the last incarnation that exited ended (nil: status 0).
	exitErr error
}

// serverParams says how to start the server.
type serverParams struct {
	bin, dataDir, databaseURL, logPath string
	port                               int
	// extra are more flags for `steward server`.
	extra []string
}

func newServerProc(p serverParams) *serverProc {
	addr := fmt.Sprintf("127.0.0.1:%d", p.port)
	// The trials define their own catalog (resync's "sleeper" too).
	args := []string{"server", "--dev", "--process-provider=false", "--dev-catalog=false", "--data-dir", p.dataDir, "--listen", addr, "--dev-catalog=false",
		"--health-interval", "1s", "--cleanup-interval", "1s", "--log-level", "info"}
	if p.databaseURL != "" {
		args = append(args, "--database-url", p.databaseURL)
	}
	args = append(args, p.extra...)
	return newProc(p.bin, args, p.logPath, "http://"+addr)
}

// newProc is a process of bin with args, logging to logPath, that serves
// HTTP at base ("" when it does not).
func newProc(bin string, args []string, logPath, base string) *serverProc {
	// Every flag also reads STEWARD_<FLAG>: the trial's flags must be the
	// only configuration, whatever the caller's environment holds.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STEWARD_") {
			env = append(env, kv)
		}
	}
	return &serverProc{bin: bin, args: args, env: env, logPath: logPath, base: base,
		hc: &http.Client{Timeout: time.Second, Transport: newTransport()}}
}

// start starts a new incarnation; the previous one must have exited.
func (s *serverProc) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		select {
		case <-s.exited:
		default:
			return errors.New("crashtest: server started while the previous one runs")
		}
	}
	log, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open server log: %w", err)
	}
	defer log.Close() // the child holds its own descriptor
	s.n++
	fmt.Fprintf(log, `{"time":%q,"level":"INFO","msg":"crashtest: starting incarnation","incarnation":%d}`+"\n",
		time.Now().UTC().Format(time.RFC3339Nano), s.n)
	cmd := exec.Command(s.bin, s.args...)
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	s.cmd, s.exited, s.killed = cmd, exited, false
	n := s.n
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		s.exitErr = err
		if !s.killed {
			s.unexpected = append(s.unexpected, fmt.Sprintf("incarnation %d exited by itself: %v", n, err))
		}
		s.mu.Unlock()
		close(exited)
	}()
	return nil
}

// kill sends SIGKILL to the running incarnation and waits until it is
// reaped, so its port and files are free. It marks the log first, so a
// reader sees where the kill fell.
func (s *serverProc) kill() {
	s.signal(syscall.SIGKILL, "crashtest: SIGKILL")
	s.wait(0)
}

// terminate sends SIGTERM to the running incarnation and follows its
// graceful stop: it polls /readyz until it answers 503 (unready is how long
// that took) and waits for the exit (exited), at most within; a stop that
// takes longer ends with SIGKILL. problems says what the stop got wrong.
func (s *serverProc) terminate(ctx context.Context, within time.Duration) (unready, exited time.Duration, problems []string) {
	start := time.Now()
	if !s.signal(syscall.SIGTERM, "crashtest: SIGTERM") {
		return 0, 0, []string{"no server ran to stop"}
	}
	defer s.hc.CloseIdleConnections()
	s.mu.Lock()
	done := s.exited
	s.mu.Unlock()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if unready == 0 && s.readyzDown(ctx) {
			unready = time.Since(start)
		}
		select {
		case <-done:
			exited = time.Since(start)
			if unready == 0 {
				problems = append(problems, "/readyz never answered 503 before the process exited")
			}
			s.mu.Lock()
			err := s.exitErr
			s.mu.Unlock()
			if err != nil {
				problems = append(problems, fmt.Sprintf("exited with %v, want status 0", err))
			}
			return unready, exited, problems
		case <-deadline.C:
			problems = append(problems, fmt.Sprintf("still running %v after SIGTERM", within))
			s.signal(syscall.SIGKILL, "crashtest: SIGKILL (did not stop in time)")
			s.wait(0)
			return unready, time.Since(start), problems
		case <-ctx.Done():
			s.signal(syscall.SIGKILL, "crashtest: SIGKILL (trial ended)")
			s.wait(0)
			return unready, time.Since(start), append(problems, ctx.Err().Error())
		case <-tick.C:
		}
	}
}

// readyzDown reports whether /readyz answers 503 saying the server drains.
func (s *serverProc) readyzDown(ctx context.Context) bool {
	status, body, ok := s.get(ctx, "/readyz")
	return ok && status == http.StatusServiceUnavailable && strings.Contains(body, `"draining":"stopping`)
}

// get asks the process for path within half a second; ok is false when it
// did not answer.
func (s *serverProc) get(ctx context.Context, path string) (status int, body string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0, "", false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, string(b), err == nil
}

// sentinelLeads says whether the process's sentinel runs the decision
// cycles (its /metrics shows steward_sentinel_leading 1).
func (s *serverProc) sentinelLeads(ctx context.Context) bool {
	_, body, ok := s.get(ctx, "/metrics")
	if !ok {
		return false
	}
	for line := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(line, "steward_sentinel_leading") && strings.HasSuffix(line, " 1") {
			return true
		}
	}
	return false
}

// stop ends the running incarnation, gracefully if it can within grace,
// else with SIGKILL; it returns once the process is reaped. It is safe to
// call when nothing runs.
func (s *serverProc) stop(grace time.Duration) {
	defer s.hc.CloseIdleConnections()
	if !s.signal(syscall.SIGTERM, "crashtest: SIGTERM (end of trial)") {
		return
	}
	if !s.wait(grace) {
		s.signal(syscall.SIGKILL, "crashtest: SIGKILL (did not stop in time)")
		s.wait(0)
	}
}

// signal sends sig to the running incarnation; it reports false when none runs.
func (s *serverProc) signal(sig syscall.Signal, note string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
	}
	s.killed = true
	if log, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_APPEND, 0); err == nil {
		fmt.Fprintf(log, `{"time":%q,"level":"INFO","msg":%q,"incarnation":%d,"pid":%d}`+"\n",
			time.Now().UTC().Format(time.RFC3339Nano), note, s.n, s.cmd.Process.Pid)
		log.Close()
	}
	_ = s.cmd.Process.Signal(sig)
	return true
}

// wait waits for the running incarnation to be reaped, at most d (0: as
// long as it takes); it reports whether it was.
func (s *serverProc) wait(d time.Duration) bool {
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	if exited == nil {
		return true
	}
	if d == 0 {
		<-exited
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-exited:
		return true
	case <-t.C:
		return false
	}
}

// pid is the running incarnation's process id (0: none runs).
func (s *serverProc) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// running reports whether an incarnation runs.
func (s *serverProc) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// exitedByItself returns a line per incarnation that exited without the
// harness ending it.
func (s *serverProc) exitedByItself() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unexpected...)
}

// waitReady polls GET /api/v1/health until it answers 200, the incarnation
// exits, or within passes; it returns how long that took.
func (s *serverProc) waitReady(ctx context.Context, within time.Duration) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if !s.running() {
			return 0, fmt.Errorf("server exited before it answered /api/v1/health (see %s)", s.logPath)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/api/v1/health", nil)
		if resp, err := s.hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start), nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("server did not answer /api/v1/health with 200 within %v (see %s)", within, s.logPath)
		case <-tick.C:
		}
	}
}

// FreePort returns a TCP port free on 127.0.0.1 now.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
