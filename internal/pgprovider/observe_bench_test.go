package pgprovider

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// BenchmarkObserve_Databases measures one drift observation of every
// database on a server: STEWARD_BENCH_DATABASES (default 1,000) databases,
// each made by Create (a role and a database, as an order makes them), one
// in ten with an extension in its spec (observed by connecting to it).
// It reports the cycle's time and the queries it sent. The databases are
// dropped after; use a throwaway server, as it takes 7.5 MB per database:
//
//	scripts/pg-throwaway start /tmp/pg-bench /tmp/pg-bench-url
//	STEWARD_TEST_DATABASE_URL=$(cat /tmp/pg-bench-url) go test -run XXX -bench Observe -benchtime 5x ./internal/pgprovider/
func BenchmarkObserve_Databases(b *testing.B) {
	adminURL := os.Getenv(storetest.EnvDatabaseURL)
	if adminURL == "" {
		b.Skipf("%s is not set", storetest.EnvDatabaseURL)
	}
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("STEWARD_BENCH_DATABASES")); err == nil && v > 0 {
		n = v
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	var queries atomic.Int64
	p, err := open(context.Background(), Config{AdminURL: adminURL, SecretKey: key, AllowExtensions: []string{"pg_trgm"}},
		func(c *pgx.ConnConfig) { c.Tracer = countQueries{&queries} })
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Close) // after the deletes below: cleanups run last first
	ids := make([]string, n)
	prefix := fmt.Sprintf("obs%d_", time.Now().UnixNano()%1e6)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%04d", prefix, i)
	}
	b.Cleanup(func() {
		for _, id := range ids {
			_, _ = p.Delete(context.Background(), id)
		}
	})
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan string)
	errs := make(chan error, n)
	for range 4 {
		wg.Go(func() {
			for id := range work {
				spec := map[string]any{"database": id, "connection_limit": 20.0}
				if id[len(id)-1] == '0' {
					spec["extensions"] = []any{"pg_trgm"}
				}
				if _, err := p.Create(context.Background(), provider.CreateRequest{InstanceID: id, ServiceType: ServiceType,
					Spec: spec}); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.Logf("made %d databases in %s", n, time.Since(start).Round(time.Second))

	queries.Store(0)
	b.ResetTimer()
	for b.Loop() {
		seen, err := p.Observe(context.Background(), DriftReport, ids...)
		if err != nil || len(seen) != n {
			b.Fatalf("observed %d of %d: %v", len(seen), n, err)
		}
	}
	b.ReportMetric(float64(queries.Load())/float64(b.N), "queries/cycle")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/cycle")
}

// countQueries counts the queries a pool sends.
type countQueries struct{ n *atomic.Int64 }

func (c countQueries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (countQueries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
