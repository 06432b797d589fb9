package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/crashtest"
	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/poll"
)

// Issue 13: `steward server` on a data directory another server holds
// exits 1 at once with one line naming the holder's pid, while `steward
// token create` on the same directory still works; once the first server
// stops, a server starts there again.
func TestServer_SecondOnSameDataDirExitsOneNamingTheHolder(t *testing.T) {
	t.Parallel()
	bin := stewardBinary(t)
	dir := filepath.Join(t.TempDir(), "data")
	first, firstLog := startServer(t, bin, "server", "--dev", "--data-dir", dir, "--listen", "127.0.0.1:0")
	poll.Until(t, "the first server started", func() bool { return strings.Contains(firstLog.String(), `"msg":"steward started"`) })

	code, stdout, stderr := runSteward(t, bin, "server", "--dev", "--data-dir", dir, "--listen", "127.0.0.1:0")
	want := fmt.Sprintf("steward: data directory %s is in use by another steward server (pid %d); stop it or use another --data-dir\n",
		dir, first.Process.Pid)
	if code != 1 || stderr != want || stdout != "" {
		t.Fatalf("second server on the same data directory: exit %d, stdout %q, stderr\n%s\nwant exit 1 and only %q",
			code, stdout, stderr, want)
	}

	code, stdout, stderr = runSteward(t, bin, "token", "create", "--data-dir", dir, "--name", "ops", "--role", "admin")
	if code != 0 || !strings.HasPrefix(stdout, "stw_") {
		t.Fatalf("token create beside a running server: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}

	stopServer(t, first)
	again, againLog := startServer(t, bin, "server", "--dev", "--data-dir", dir, "--listen", "127.0.0.1:0")
	poll.Until(t, "a server started on the data directory the first one left", func() bool {
		return strings.Contains(againLog.String(), `"msg":"steward started"`)
	})
	stopServer(t, again)
}

// Issue 13: with its port taken, `steward server` exits 1 with one line
// saying so, before any start-up work: no database, no NATS store, no
// start and stop logged.
func TestServer_PortInUseExitsOneBeforeAnyWork(t *testing.T) {
	t.Parallel()
	bin := stewardBinary(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	dir := filepath.Join(t.TempDir(), "data")

	code, stdout, stderr := runSteward(t, bin, "server", "--dev", "--data-dir", dir, "--listen", addr)
	want := "steward: listen on " + addr + ": address already in use (is another steward server running?)\n"
	if code != 1 || stderr != want || stdout != "" {
		t.Errorf("server on a port in use: exit %d, stdout %q, stderr\n%s\nwant exit 1 and only %q", code, stdout, stderr, want)
	}
	for _, line := range []string{"steward stopped", "PeriodicJobEnqueuer", "applied migration"} {
		if strings.Contains(stderr, line) {
			t.Errorf("stderr logs %q: start-up work ran before the listen failed", line)
		}
	}
	for _, name := range []string{"steward.db", "nats", "process-provider"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s in the data directory (%v): start-up work ran before the listen failed", name, err)
		}
	}
}

// stewardBinary builds ./cmd/steward once for the package's tests.
func stewardBinary(t *testing.T) string {
	t.Helper()
	bin, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

var buildOnce = sync.OnceValues(func() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	moduleDir, err := crashtest.ModuleDir(ctx, ".")
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "steward-cli-test-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "steward")
	return bin, crashtest.Build(ctx, moduleDir, bin)
})

// binDir is where buildOnce built the binary, removed by TestMain.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	kubetest.StopShared()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// stewardEnv is the test's environment without STEWARD_* variables, so the
// command line is the only configuration.
func stewardEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STEWARD_") {
			env = append(env, kv)
		}
	}
	return env
}

// runSteward runs the binary to its end (at most a minute) and returns its
// exit code and output.
func runSteward(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runStewardEnv(t, bin, stewardEnv(), args...)
}

// runStewardEnv is runSteward with the environment env.
func runStewardEnv(t *testing.T, bin string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && ctx.Err() == nil:
		code = exit.ExitCode()
	default:
		t.Fatalf("steward %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return code, out.String(), errOut.String()
}

// syncBuffer is a process's output, readable while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServer starts the binary and leaves it running; it is killed at
// cleanup unless stopServer stopped it.
func startServer(t *testing.T, bin string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = stewardEnv()
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("steward %s:\n%s", strings.Join(args, " "), log.String())
		}
	})
	return cmd, log
}

// stopServer stops a server with SIGTERM and wants it to exit 0.
func stopServer(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server stopped with SIGTERM: %v", err)
	}
}
