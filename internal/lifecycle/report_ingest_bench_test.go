package lifecycle_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// BenchmarkStatusReport_Ingest measures provider status reports answered
// per second: 16 clients each PUT reports for 4 running orders of their
// own, in turn, every report a change (its message counts up), so each is
// recorded and reaches its order. The orders are made untimed first.
//
//	go test -run XXX -bench StatusReport_Ingest -benchtime 8000x ./internal/lifecycle/
func BenchmarkStatusReport_Ingest(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(fmt.Sprintf("%s/clients=16", engine), func(b *testing.B) { benchReportIngest(b, engine, 16) })
	}
}

func benchReportIngest(b *testing.B, engine store.Engine, clients int) {
	const perClient = 4
	e := setupOrders(b, engine, false, benchLogger)
	instances := make([]string, clients*perClient)
	for i := range instances {
		id := fmt.Sprintf("ingest-%d", i)
		o := e.create(b, id, 2)
		e.p.WaitForCall(b, providertest.MethodCreate, o.InstanceID)
		e.report(b, o.InstanceID, "RUNNING")
		pollState(b, e, id, "up")
		instances[i] = o.InstanceID
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for n := c; n < b.N; n += clients {
				id := instances[c*perClient+n/clients%perClient]
				e.s.Do(b, "PUT", "/api/v1/service-type-instances/"+id+"/status", map[string]any{
					"status": "RUNNING", "message": fmt.Sprintf("pid %d", n),
					"observed_time": time.Now().UTC().Format(time.RFC3339Nano),
				}).Want(b, http.StatusOK)
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reports/s")
}
