package cli_test

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/cli"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// background is a client command running while the test acts.
type background struct {
	stdout, stderr syncBuffer
	code           chan int
}

// exited returns the command's exit code, and false while it runs.
func (b *background) exited() (int, bool) {
	select {
	case code := <-b.code:
		b.code <- code // for the next reader
		return code, true
	default:
		return 0, false
	}
}

// Issue 46, item 8: after rehydrate --wait says the Operation is done, the
// old instance runs on until its cleanup task removes it. --wait says so,
// naming the task; --wait=all also waits until it is removed. The test's
// provider refuses deletes until the test lets it, so the cleanup is
// pending for as long as the test needs.
func TestClient_WaitSaysWhatIsBeingRemovedAndWaitAllWaitsForIt(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, store.SQLite, apitest.Fast, func(c *server.Config) {
		c.CleanupMaxRetries = 1000 // the refused deletes must not fail the task for good
	})
	p := providertest.New(t)
	s.Do(t, "POST", "/api/v1/providers", p.Registration("vm-sp", "vm")).Want(t, http.StatusCreated)
	s.Do(t, "POST", "/api/v1/catalog-items?id=small-vm", map[string]any{"service_type": "vm",
		"defaults": map[string]any{"memory": map[string]any{"size": "2GB"}, "guest_os": map[string]any{"type": "fedora-39"},
			"vcpu": map[string]any{"count": 2}},
	}).Want(t, http.StatusCreated)
	var o struct {
		InstanceID string `json:"instance_id"`
	}
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "small-vm"}).
		Want(t, http.StatusCreated).JSON(t, &o)
	p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
	s.ReportStatus(t, o.InstanceID, "RUNNING")
	config := filepath.Join(t.TempDir(), "config.yaml")
	start := func(args ...string) *background {
		b := &background{code: make(chan int, 1)}
		args = append(args, "--config", config, "--server", s.URL(), "--interval", "50ms", "--timeout", "2m")
		go func() { b.code <- cli.MainContext(t.Context(), args, strings.NewReader(""), &b.stdout, &b.stderr) }()
		return b
	}
	known := []string{o.InstanceID}
	// rehydrate runs `rehydrate web` with wait and plays the provider,
	// which reports the new instance RUNNING; it returns the new id.
	rehydrate := func(wait string) (*background, string) {
		b := start("rehydrate", "web", wait)
		var id string
		poll.Until(t, "the rehydration creates its instance", func() bool {
			for _, c := range p.Creates() {
				if !slices.Contains(known, c.InstanceID) {
					id = c.InstanceID
				}
			}
			return id != ""
		})
		known = append(known, id)
		s.ReportStatus(t, id, "RUNNING")
		return b, id
	}

	if code, _, stderr := newClient(t, s.URL()).run("rehydrate", "web", "--wait=bogus"); code != 2 ||
		!strings.Contains(stderr, "--wait=all") {
		t.Errorf("--wait=bogus: exit %d, %q; want a usage error naming --wait=all", code, stderr)
	}

	p.FailDeletes(http.StatusServiceUnavailable)
	b, first := rehydrate("--wait")
	poll.Until(t, "rehydrate --wait ends", func() bool { _, done := b.exited(); return done })
	if code, _ := b.exited(); code != 0 {
		t.Fatalf("rehydrate --wait: exit %d\nstdout:\n%s\nstderr:\n%s", code, b.stdout.String(), b.stderr.String())
	}
	if rows := table(b.stdout.String()); len(rows) != 2 || rows[1][3] != "true" {
		t.Errorf("rehydrate --wait printed %q, want its done Operation", rows)
	}
	said := b.stderr.String()
	if !strings.Contains(said, "the old instance "+o.InstanceID+" on vm-sp is being removed (cleanup task ") ||
		!strings.Contains(said, "--wait=all waits until it is gone") {
		t.Errorf("rehydrate --wait said:\n%s\nwant the old instance %s being removed, with its task", said, o.InstanceID)
	}

	b, _ = rehydrate("--wait=all")
	poll.Until(t, "rehydrate --wait=all says it waits for the old instance", func() bool {
		return strings.Contains(b.stderr.String(), "the old instance "+first+" on vm-sp is being removed")
	})
	if code, done := b.exited(); done {
		t.Fatalf("rehydrate --wait=all ended (exit %d) while the old instance was not removed:\n%s", code, b.stderr.String())
	}
	p.SucceedDeletes()
	poll.Until(t, "rehydrate --wait=all ends once the cleanup is done", func() bool { _, done := b.exited(); return done })
	if code, _ := b.exited(); code != 0 {
		t.Fatalf("rehydrate --wait=all: exit %d\nstderr:\n%s", code, b.stderr.String())
	}
	said = b.stderr.String()
	for _, removed := range []string{"the old instance " + first + " on vm-sp is removed",
		"instance " + o.InstanceID + " on vm-sp is removed"} {
		if !strings.Contains(said, removed) {
			t.Errorf("rehydrate --wait=all said:\n%s\nwant %q", said, removed)
		}
	}
	var shown struct{ Cleanup []any }
	s.Do(t, "GET", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusOK).JSON(t, &shown)
	if len(shown.Cleanup) != 0 {
		t.Errorf("after rehydrate --wait=all the order still shows cleanup %v", shown.Cleanup)
	}
}
