package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stewardhq/steward/internal/ctl"
)

// Issue 46: --log-format auto is text on a terminal and JSON elsewhere (a
// pipe, a file); text and json are what they say; anything else is a
// usage error.
func TestLogFlags_FormatFollowsTheFlagAndTheTerminal(t *testing.T) {
	t.Parallel()
	file, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var buf bytes.Buffer
	for _, tc := range []struct {
		format string
		w      io.Writer
		want   string
	}{
		{"auto", &buf, `{"time":`},
		{"auto", file, `{"time":`},
		{"json", &buf, `{"time":`},
		{"text", &buf, "time="},
	} {
		buf.Reset()
		_ = file.Truncate(0)
		logHello(t, tc.format, tc.w)
		written, _ := os.ReadFile(file.Name())
		if got := buf.String() + string(written); !strings.HasPrefix(got, tc.want) {
			t.Errorf("--log-format %s to a %T: %q, want it to start %q", tc.format, tc.w, got, tc.want)
		}
	}

	master, slave := openPTY(t)
	logHello(t, "auto", slave)
	read := make(chan string, 1)
	go func() {
		b := make([]byte, 512)
		n, _ := master.Read(b)
		read <- string(b[:n])
	}()
	select {
	case got := <-read:
		if !strings.HasPrefix(got, "time=") || !strings.Contains(got, "msg=hello") {
			t.Errorf("--log-format auto on a terminal: %q, want text (time=… msg=hello)", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing written to the terminal")
	}

	var usage *ctl.UsageError
	if _, err := (&logFlags{level: "info", format: "yaml"}).logger(&bytes.Buffer{}); !errors.As(err, &usage) ||
		!strings.Contains(err.Error(), `--log-format: "yaml"`) {
		t.Errorf("--log-format yaml: %v, want a usage error naming it", err)
	}
}

// logHello logs "hello" at info to w as --log-format format asks.
func logHello(t *testing.T, format string, w io.Writer) {
	t.Helper()
	l, err := (&logFlags{level: "info", format: format}).logger(w)
	if err != nil {
		t.Fatal(err)
	}
	l.Info("hello")
}

// openPTY opens a pseudo-terminal (Linux), closed at cleanup.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	var unlock int32
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlock the pseudo-terminal: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("name the pseudo-terminal: %v", e)
	}
	slave, err = os.OpenFile(filepath.Join("/dev/pts", strconv.FormatUint(uint64(n), 10)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}
