package sprm_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// lost is a status reporter whose reports never reach Steward (the replica
// the provider reported to was killed).
var lost = provider.ReportFunc(func(context.Context, provider.StatusReport) error { return nil })

func resyncFast(after, settled time.Duration) func(*server.Config) {
	return func(c *server.Config) {
		c.ResyncAfter, c.ResyncSettledEvery = after, settled
	}
}

// gets counts the provider's GET calls for instance id.
func gets(p *providertest.Server, id string) int {
	n := 0
	for _, c := range p.Calls() {
		if c.Method == providertest.MethodGet && c.InstanceID == id {
			n++
		}
	}
	return n
}

// Issue 22, item 1: the provider's RUNNING report is lost; Steward reads
// the instance back after --resync-after (not before) and applies it.
func TestResync_RecoversALostReport(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		const after = time.Second
		e := setup(t, engine, resyncFast(after, time.Hour))
		created := time.Now()
		e.create(t, "lost-1")
		if err := e.p.Report(t.Context(), lost, "lost-1", provider.StatusRunning); err != nil {
			t.Fatal(err)
		}
		poll.UntilWithin(t, 30*time.Second, "the lost RUNNING is read back from the provider", func() bool {
			return e.instance(t, "lost-1").Status == "RUNNING"
		})
		if waited := time.Since(created); waited < after {
			t.Errorf("read back %v after the create, before --resync-after (%v)", waited, after)
		}
		if n := gets(e.p, "lost-1"); n != 1 {
			t.Errorf("the provider was read %d times, want 1", n)
		}
		// The counters move once the read's pass records it, just after the status.
		poll.UntilWithin(t, 30*time.Second, "one changed resync, PROVISIONING → RUNNING, is counted", func() bool {
			m := metrics(t, e)
			return m[`steward_sprm_resyncs_total{outcome="changed"}`] == 1 &&
				m[`steward_sprm_resync_changes_total{from="PROVISIONING",to="RUNNING"}`] == 1
		})
	})
}

// Issue 22, item 1: a settled instance is read again within
// --resync-settled-every, so a change its provider never reported is caught.
func TestResync_CatchesAnUnreportedChangeOfASettledInstance(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine, resyncFast(time.Hour, 2*time.Second))
		e.create(t, "settled-1")
		e.s.ReportStatus(t, "settled-1", "RUNNING")
		if err := e.p.Report(t.Context(), lost, "settled-1", provider.StatusFailed); err != nil {
			t.Fatal(err)
		}
		poll.UntilWithin(t, 30*time.Second, "the unreported FAILED is caught", func() bool {
			return e.instance(t, "settled-1").Status == "FAILED"
		})
	})
}

// Issue 22, item 1: a provider that answers 404 for an instance it had
// acknowledged fails it, saying why; one that does not answer changes
// nothing and is counted.
func TestResync_NotFoundFailsWithAReasonAndErrorsChangeNothing(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine, resyncFast(300*time.Millisecond, time.Hour))
		e.create(t, "gone-1")
		e.create(t, "down-1")
		client := provider.NewClient(provider.ClientConfig{Timeout: 2 * time.Second})
		if _, err := client.Delete(t.Context(), e.p.URL(), "gone-1"); err != nil {
			t.Fatal(err)
		}
		var in instance
		poll.UntilWithin(t, 30*time.Second, "the lost instance is FAILED", func() bool {
			in = e.instance(t, "gone-1")
			return in.Status == "FAILED"
		})
		if want := "provider vm-sp no longer has instance gone-1 (404 on resync)"; in.StatusMessage != want {
			t.Errorf("status message %q, want %q", in.StatusMessage, want)
		}
		poll.UntilWithin(t, 30*time.Second, "a not_found resync is counted", func() bool {
			return metrics(t, e)[`steward_sprm_resyncs_total{outcome="not_found"}`] >= 1
		})

		e.p.GoDown()
		poll.UntilWithin(t, 30*time.Second, "a failed read is counted", func() bool {
			return metrics(t, e)[`steward_sprm_resyncs_total{outcome="error"}`] >= 1
		})
		if in := e.instance(t, "down-1"); in.Status != "PROVISIONING" {
			t.Errorf("an unreachable provider changed the instance to %s", in.Status)
		}
		e.p.ComeBack()
	})
}

// metrics reads the server's counters, by series.
func metrics(t *testing.T, e env) map[string]float64 {
	t.Helper()
	r := e.s.Do(t, "GET", "/metrics", nil).Want(t, http.StatusOK)
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "steward_sprm_resync") {
			continue
		}
		var v float64
		i := strings.LastIndexByte(line, ' ')
		if _, err := fmt.Sscan(line[i+1:], &v); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}
