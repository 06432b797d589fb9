package lifecycle_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// BenchmarkStatusReport_ToOrderState measures how long a provider's status
// report takes to show on its order: from sending the PUT of a RUNNING
// report for a creating order's instance to the first read of the order in
// state up (polled every millisecond). Each op creates an order and waits
// for the provider's create call first, untimed in the latencies; ns/op
// includes it. The p50 and p99 are the figures to compare when the way
// status travels up changes (issue 23).
//
//	go test -run XXX -bench StatusReport_ToOrderState -benchtime 400x ./internal/lifecycle/
func BenchmarkStatusReport_ToOrderState(b *testing.B) {
	for _, engine := range storetest.Engines() {
		for _, clients := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/clients=%d", engine, clients), func(b *testing.B) {
				benchReportLatency(b, engine, clients)
			})
		}
	}
}

func benchReportLatency(b *testing.B, engine store.Engine, clients int) {
	e := setupOrders(b, engine, false, benchLogger)
	latencies := make([]time.Duration, 0, b.N)
	var mu sync.Mutex
	work := make(chan int)
	var wg sync.WaitGroup
	b.ResetTimer()
	for range clients {
		wg.Go(func() {
			for n := range work {
				id := fmt.Sprintf("latency-%d", n)
				o := e.create(b, id, 2)
				e.p.WaitForCall(b, providertest.MethodCreate, o.InstanceID)
				t0 := time.Now()
				e.report(b, o.InstanceID, "RUNNING")
				pollState(b, e, id, "up")
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
	b.StopTimer()
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// pollState polls an order every millisecond, until a one-minute deadline,
// until it is in state (finer than poll.Until: latencies are measured
// through it).
func pollState(b testing.TB, e *orders, id, state string) {
	b.Helper()
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		var o struct {
			State string `json:"state"`
		}
		e.s.Do(b, "GET", "/api/v1/catalog-item-instances/"+id, nil).Want(b, http.StatusOK).JSON(b, &o)
		if o.State == state {
			return
		}
		select {
		case <-deadline.C:
			b.Fatalf("order %s never reached %s (it is %s)", id, state, o.State)
		case <-tick.C:
		}
	}
}
