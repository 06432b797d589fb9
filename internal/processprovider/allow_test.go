package processprovider

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Only the commands the operator allowed run: an order naming any other is
// refused as the request's fault (400), and nothing starts.
func TestAllowCommands_RefusesWhatWasNotAllowed(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.AllowCommands = []string{"/bin/sleep"} })
	_, err := b.create(t, "shell", `{"process": {"command": ["/bin/sh", "-c", "touch pwned"]}}`)
	var re *RequestError
	if !errors.As(err, &re) || re.HTTPStatus() != 400 || !strings.Contains(err.Error(), "spec.process.command[0]") {
		t.Fatalf("create of /bin/sh: %v, want a 400 on spec.process.command[0]", err)
	}
	if _, err := os.Stat(filepath.Join(b.workDir, "shell", "pwned")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused command ran: %v", err)
	}
	b.mustCreate(t, "sleeper", `{"process": {"command": ["/bin/sleep"], "args": ["60"]}}`)
	b.mustDelete(t, "sleeper")

	// Not told which: only the dev catalog's.
	d := setup(t, func(c *Config) { c.AllowCommands = nil })
	if _, err := d.create(t, "shell", `{"process": {"command": ["/bin/sh", "-c", "true"]}}`); !errors.As(err, &re) {
		t.Fatalf("a provider not told which commands it runs ran /bin/sh: %v", err)
	}
}

// A provider started as root refuses to start unless told it may run its
// orders' processes as root.
func TestDaemon_RefusesRootUnlessAllowed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	t.Parallel()
	d := NewDaemon(DaemonConfig{StewardURL: "http://127.0.0.1:1", WorkDir: t.TempDir()})
	if err := d.Start(t.Context()); !errors.Is(err, ErrRunsAsRoot) {
		_ = d.Stop(t.Context())
		t.Fatalf("Start as root: %v, want ErrRunsAsRoot", err)
	}
}
