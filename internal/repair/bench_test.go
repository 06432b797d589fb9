package repair_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// BenchmarkRepair_RequestAndFinish measures repair operations through the
// API: one op is a POST …/repair (row, audit record and delivery job in one
// transaction; the job then issues a worker token and calls the provider)
// followed by the worker's final report. Each of 16 clients owns one app
// instance of a simple runtime, so its operations never wait on another's.
//
//	go test -run XXX -bench Repair -benchtime 2000x ./internal/repair/
func BenchmarkRepair_RequestAndFinish(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(fmt.Sprintf("%s/clients=16", engine), func(b *testing.B) {
			const clients = 16
			s := apitest.Start(b, engine, apitest.Fast, func(c *server.Config) {
				c.Dev, c.APIToken = false, root
				c.Logger = slog.New(slog.DiscardHandler)
			})
			p := providertest.New(b, func(c *providertest.Config) {
				c.Repair, c.Logger = true, slog.New(slog.DiscardHandler)
			})
			auth := []string{"Authorization", "Bearer " + root}
			s.Do(b, "POST", "/api/v1/providers", p.Registration("k8s-sp", "proc-app"), auth...).Want(b, http.StatusCreated)
			s.Do(b, "POST", "/api/v1/service-types?id=proc-app", map[string]any{"schema": map[string]any{"type": "object"},
				"runtime": map[string]any{"kind": "simple", "members": true}}, auth...).Want(b, http.StatusCreated)
			s.Do(b, "POST", "/api/v1/catalog-items?id=proc-app", map[string]any{"service_type": "proc-app"}, auth...).
				Want(b, http.StatusCreated)
			ids := make([]string, clients)
			for i := range ids {
				ids[i] = fmt.Sprintf("app-%d", i)
				s.Do(b, "POST", "/api/v1/catalog-item-instances?id="+ids[i], map[string]any{"catalog_item_id": "proc-app"},
					auth...).Want(b, http.StatusCreated)
			}
			for _, id := range ids {
				poll.Until(b, id+" placed", func() bool {
					var app appInstance
					s.Do(b, "GET", appPath(id), nil, auth...).Want(b, http.StatusOK).JSON(b, &app)
					_, held := p.Instances()[app.InstanceID]
					return held
				})
			}
			latencies := make([]time.Duration, 0, b.N)
			var mu sync.Mutex
			work := make(chan int)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for c := range clients {
				wg.Go(func() {
					for range work {
						t0 := time.Now()
						var op operation
						s.Do(b, "POST", appPath(ids[c])+"/repair", map[string]any{"action": "repair", "scope": "whole_runtime"},
							auth...).Want(b, http.StatusAccepted).JSON(b, &op)
						s.Do(b, "POST", appPath(ids[c])+"/repair-operations/"+op.ID+"/report",
							map[string]any{"status": "succeeded"}, auth...).Want(b, http.StatusOK)
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
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "repairs/s")
			b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
