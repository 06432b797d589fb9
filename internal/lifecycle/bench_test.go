package lifecycle_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// BenchmarkTransfer_PatchToActive measures updates through the engine:
// one op is a PATCH of an order's process.args followed by waiting until
// the order is up again with the new set active at the provider (on_update,
// validation by the policy chain, promote, the provider's in-place update
// and its RUNNING report: four transfers). Each client owns one order of
// the seeded sleeper item on the no-op process provider.
//
//	go test -run XXX -bench Transfer -benchtime 400x ./internal/lifecycle/
func BenchmarkTransfer_PatchToActive(b *testing.B) {
	for _, engine := range storetest.Engines() {
		for _, clients := range []int{16, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", engine, clients), func(b *testing.B) {
				benchUpdates(b, engine, clients)
			})
		}
	}
}

func benchUpdates(b *testing.B, engine store.Engine, clients int) {
	s := apitest.Start(b, engine, benchLogger, func(c *server.Config) {
		c.ProcessProvider, c.ProcessProviderNoOp = true, true
	})
	<-s.ProcessProvider().Registered()
	ids := make([]string, clients)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-%d", i)
		s.Do(b, "POST", "/api/v1/catalog-item-instances?id="+ids[i], map[string]any{"catalog_item_id": "sleeper"}).
			Want(b, http.StatusCreated)
	}
	for _, id := range ids {
		waitUp(b, s, id, "3600")
	}
	latencies := make([]time.Duration, 0, b.N)
	var mu sync.Mutex
	work := make(chan int)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for n := range work {
				arg := fmt.Sprint(1000 + n)
				t0 := time.Now()
				s.Do(b, "PATCH", "/api/v1/catalog-item-instances/"+ids[c], map[string]any{
					"user_values": []any{map[string]any{"path": "process.args", "value": []string{arg}}},
				}).Want(b, http.StatusOK)
				waitUp(b, s, ids[c], arg)
				mu.Lock()
				latencies = append(latencies, time.Since(t0))
				mu.Unlock()
			}
		})
	}
	for n := range b.N {
		work <- n
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "updates/s")
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// benchLogger discards the server's log, or writes it to the file
// STEWARD_BENCH_LOG names, to see why a run stalls.
func benchLogger(c *server.Config) {
	c.Logger = slog.New(slog.DiscardHandler)
	if path := os.Getenv("STEWARD_BENCH_LOG"); path != "" {
		if f, err := os.Create(path); err == nil {
			c.Logger = slog.New(slog.NewTextHandler(f, nil))
		}
	}
}

// waitUp polls an order every 2 ms, until a one-minute deadline, until it
// is up with process.args [arg] active. The benchmark's latencies are
// measured through it, so it polls finer than poll.Until.
func waitUp(b testing.TB, s *apitest.Server, id, arg string) {
	b.Helper()
	deadline := time.After(time.Minute)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		var o struct {
			State      string `json:"state"`
			Status     string `json:"status"`
			Attributes struct {
				Active struct {
					Process struct {
						Args []string `json:"args"`
					} `json:"process"`
				} `json:"active"`
			} `json:"attributes"`
		}
		s.Do(b, "GET", "/api/v1/catalog-item-instances/"+id, nil).Want(b, http.StatusOK).JSON(b, &o)
		if o.State == "up" && o.Status == "RUNNING" && slices.Equal(o.Attributes.Active.Process.Args, []string{arg}) {
			return
		}
		select {
		case <-deadline:
			b.Fatalf("order %s never came up with args %s", id, arg)
		case <-tick.C:
		}
	}
}
