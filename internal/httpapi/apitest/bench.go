package apitest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// BenchOrdersToUp is the body of the benchmarks of orders reaching up:
// clients create b.N orders (order n has id o-n and body(n)) as fast as
// they are acknowledged, and the clock stops when every order of the
// server is up. It reports acknowledged/s (the creates) and up/s (b.N
// over the time to the last up).
func (s *Server) BenchOrdersToUp(b *testing.B, clients int, body func(n int) any) {
	b.Helper()
	work := make(chan int)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for n := range work {
				s.Do(b, "POST", fmt.Sprintf("/api/v1/catalog-item-instances?id=o-%d", n), body(n)).Want(b, http.StatusCreated)
			}
		})
	}
	for n := range b.N {
		work <- n
	}
	close(work)
	wg.Wait()
	acked := time.Since(start)
	deadline := time.Now().Add(10 * time.Minute)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var up int
		if err := s.DB().QueryRow(context.Background(),
			"SELECT COUNT(*) FROM catalog_item_instances WHERE state = 'up'").Scan(&up); err != nil {
			b.Fatal(err)
		}
		if up == b.N {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d orders up after 10 minutes", up, b.N)
		}
		select {
		case <-b.Context().Done():
			return
		case <-tick.C:
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/acked.Seconds(), "acked/s")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "up/s")
}
