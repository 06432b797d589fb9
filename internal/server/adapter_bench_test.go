package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/adapter"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/kubetest"
	polling "github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// BenchmarkAdapterPipeline measures reconcile events per second from the
// sentinel through JetStream to the adapter and its status report: one
// op is one sentinel cycle that publishes an event for each of N orders,
// and the wait until every order has its report stored. One adapter
// replica, whose config applies one ConfigMap per order, with:
//
//   - transport=memory: no Kubernetes (the pipeline's own cost);
//   - transport=kube: a real kube-apiserver (server-side apply).
//
// Run: go test ./internal/server -run '^$' -bench AdapterPipeline -benchtime 3x
// (STEWARD_TEST_DATABASE_URL for PostgreSQL; the kube rows need
// scripts/kube-throwaway build).
func BenchmarkAdapterPipeline(b *testing.B) {
	const orders = 500
	for _, engine := range storetest.Engines() {
		for _, kind := range []string{"memory", "kube"} {
			b.Run(fmt.Sprintf("%s/transport=%s", engine, kind), func(b *testing.B) {
				benchPipeline(b, engine, kind, orders)
			})
		}
	}
}

func benchPipeline(b *testing.B, engine store.Engine, kind string, orders int) {
	var transport adapter.Transport = adapter.NewMemoryTransport()
	env := func(string) (string, bool) { return "", false }
	if kind == "kube" {
		c := kubetest.Start(b)
		// No client-side rate limit: the API server's own speed is measured
		// (the adapter's default is 50 requests/s, burst 100).
		rc := c.RESTConfig()
		rc.QPS, rc.Burst = 5000, 5000
		kt, err := adapter.NewKubernetesTransport(rc)
		if err != nil {
			b.Fatal(err)
		}
		transport = kt
		env = func(k string) (string, bool) { return c.Namespace, k == "MEM_NAMESPACE" }
	}
	// The in-process sentinel runs its first cycle at start and then not
	// for an hour: each op runs a cycle itself.
	s := apitest.Start(b, engine, apitest.Fast, func(c *server.Config) { c.SentinelInterval = time.Hour })
	setupApp(b, s)
	for i := range orders {
		s.Do(b, "POST", fmt.Sprintf("/api/v1/catalog-item-instances?id=b%04d", i), map[string]any{"catalog_item_id": "app"}).
			Want(b, http.StatusCreated)
	}
	startReplica(b, s, transport, env)
	ctx := context.Background()
	db := s.DB()
	for b.Loop() {
		b.StopTimer()
		// Every order new again to the sentinel, and without a report.
		for _, q := range []string{`DELETE FROM sentinel_marks`, `DELETE FROM order_adapter_statuses`} {
			if _, err := db.Exec(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if st, err := s.Sentinel().RunOnce(ctx); err != nil || st.Published != orders {
			b.Fatalf("sentinel cycle = %+v, %v; want %d published", st, err, orders)
		}
		polling.UntilWithin(b, 2*time.Minute, "every order has its report", func() bool { return reports(b, db) >= orders })
	}
	b.ReportMetric(float64(orders)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func reports(b *testing.B, db *store.DB) int {
	var n int
	if err := db.QueryRow(context.Background(), `SELECT COUNT(*) FROM order_adapter_statuses`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}
