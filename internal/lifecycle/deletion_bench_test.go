package lifecycle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/bench"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// BenchmarkAdapterStatus_Ingest measures adapter status reports through
// HTTP (PUT …/adapter-statuses/{adapter}): b.N reports from 16 or 64
// clients (closed loop), spread over 256 orders and 4 adapters, each newer
// than the last of its adapter (a few race a newer one and are discarded
// with 204: that is ingest too). Every report is validated, checked
// against the order's generation under its row lock, stored, and offered
// to the deletion gate, in one transaction. The rate=… runs are open loop
// at that many reports per second (latency counts from when each was due):
// the tail at one load as the clients grow.
//
//	go test -run XXX -bench AdapterStatus -benchtime 40000x ./internal/lifecycle/
func BenchmarkAdapterStatus_Ingest(b *testing.B) {
	for _, engine := range storetest.Engines() {
		for _, rate := range []float64{0, 4000} {
			for _, clients := range []int{16, 64} {
				name := fmt.Sprintf("%s/clients=%d", engine, clients)
				if rate > 0 {
					name += fmt.Sprintf("/rate=%g", rate)
				}
				b.Run(name, func(b *testing.B) { benchIngest(b, engine, clients, rate) })
			}
		}
	}
}

func benchIngest(b *testing.B, engine store.Engine, clients int, rate float64) {
	const orders, adapters = 256, 4
	s := apitest.Start(b, engine, benchLogger, func(c *server.Config) {
		c.ProcessProvider, c.ProcessProviderNoOp = true, true
	})
	<-s.ProcessProvider().Registered()
	for i := range orders {
		s.Do(b, "POST", fmt.Sprintf("/api/v1/catalog-item-instances?id=o-%d", i),
			map[string]any{"catalog_item_id": "sleeper"}).Want(b, http.StatusCreated)
	}
	base := time.Now().Add(-time.Hour)
	body := func(n int) []byte {
		r, _ := json.Marshal(map[string]any{
			"observed_generation": 1,
			"observed_time":       base.Add(time.Duration(n) * time.Microsecond).UTC().Format(time.RFC3339Nano),
			"conditions": []map[string]any{
				{"type": "Applied", "status": "True"}, {"type": "Available", "status": "True"},
				{"type": "Health", "status": "True"},
			},
			"data": map[string]any{"namespace": fmt.Sprintf("ns-%d", n%orders)},
		})
		return r
	}
	b.ResetTimer()
	res, err := bench.Run(context.Background(), bench.Config{
		TargetURL: s.URL(), Method: http.MethodPut, Concurrency: clients, Requests: b.N, Rate: rate,
		RequestFunc: func(n int) (string, []byte, http.Header) {
			return fmt.Sprintf("/api/v1/catalog-item-instances/o-%d/adapter-statuses/a-%d", n%orders, (n/orders)%adapters),
				body(n), nil
		},
	})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Errors > 0 || res.StatusCounts[http.StatusOK]+res.StatusCounts[http.StatusNoContent] != res.Requests {
		b.Fatalf("reports not all taken: %d errors (%s), statuses %v", res.Errors, res.ErrorSample, res.StatusCounts)
	}
	b.ReportMetric(res.Throughput, "reports/s")
	b.ReportMetric(float64(res.Latency.P50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(res.Latency.P99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(res.StatusCounts[http.StatusNoContent])/float64(res.Requests)*100, "%discarded")
}

// BenchmarkDeletion_ParentOf1000 measures the hierarchy's removal: a parent
// with 1,000 children is deleted (one DELETE cascades to all of them), an
// adapter that reported on every child holds each at its gate until it
// confirms; the clock runs from the adapter's last confirming report to
// the parent's removal (the children's removals queue the parent's gate
// check). One op is one whole tree.
//
//	go test -run XXX -bench ParentOf1000 -benchtime 3x ./internal/lifecycle/
func BenchmarkDeletion_ParentOf1000(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(string(engine), func(b *testing.B) {
			benchParentRemoval(b, engine, 1000)
		})
	}
}

func benchParentRemoval(b *testing.B, engine store.Engine, children int) {
	e := setupOrders(b, engine, false, benchLogger)
	e.withPools(b, "cascade")
	var total time.Duration
	for round := range b.N {
		b.StopTimer()
		parent := fmt.Sprintf("cluster-%d", round)
		e.up(b, parent, 2)
		ids := make([]string, children)
		for i := range ids {
			ids[i] = fmt.Sprintf("%s-pool-%d", parent, i)
			e.s.Do(b, "POST", "/api/v1/catalog-item-instances?id="+ids[i], map[string]any{
				"catalog_item_id": "pool", "parent_id": parent,
			}).Want(b, http.StatusCreated)
			e.putReport(b, ids[i], "k8s", adapterReport(1, time.Now(), "True", "True"), http.StatusOK)
		}
		e.deleteOrder(b, parent)
		// Every resource is gone (the test provider deletes at once) and
		// every child waits for its adapter.
		waitFor(b, "every child waits at its gate", func() bool {
			var page struct{ Results []order }
			e.s.Do(b, "GET", "/api/v1/catalog-item-instances?max_page_size=1000&state=deleting&parent_id="+parent, nil).
				Want(b, http.StatusOK).JSON(b, &page)
			for _, o := range page.Results {
				if o.Status != "DELETED" {
					return false
				}
			}
			return len(page.Results) == children
		})
		for _, id := range ids[:children-1] {
			e.putReport(b, id, "k8s", adapterReport(2, time.Now(), "False", "True"), http.StatusOK)
		}
		b.StartTimer()
		start := time.Now()
		e.putReport(b, ids[children-1], "k8s", adapterReport(2, time.Now(), "False", "True"), http.StatusOK)
		waitFor(b, "the parent is removed", func() bool { return e.get(b, parent).State == "terminated" })
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-removal")
}

// waitFor polls cond every 5 ms for up to two minutes (benchmarks measure
// through it, so it polls finer than poll.Until).
func waitFor(b testing.TB, what string, cond func() bool) {
	b.Helper()
	deadline := time.After(2 * time.Minute)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			b.Fatalf("timed out waiting until %s", what)
		case <-tick.C:
		}
	}
}
