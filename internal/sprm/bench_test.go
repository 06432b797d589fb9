package sprm_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// BenchmarkCleanupDrain_10k measures how long one cleanup pass takes to
// delete 10,000 queued instances on a healthy provider (providertest, on
// loopback): claim in batches of 100, 8 provider deletes at a time.
func BenchmarkCleanupDrain_10k(b *testing.B) {
	const n = 10_000
	for _, engine := range storetest.Engines() {
		b.Run(string(engine), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := apitest.Start(b, engine, func(c *server.Config) {
					c.Logger = slog.New(slog.DiscardHandler)
					c.CleanupInterval = -1 // only the pass below runs
				})
				p := providertest.New(b, func(c *providertest.Config) { c.Logger = slog.New(slog.DiscardHandler) })
				s.Do(b, "POST", "/api/v1/providers", p.Registration("vm-sp", "vm")).Want(b, 201)
				seedTasks(b, s.DB(), n)
				b.StartTimer()
				res, err := s.SPRM().RunCleanup(context.Background())
				b.StopTimer()
				if err != nil || res.Done != n {
					b.Fatalf("drained %+v, %v; want %d done", res, err, n)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

// seedTasks writes n instances of vm-sp, each with a pending cleanup task.
func seedTasks(b *testing.B, db *store.DB, n int) {
	b.Helper()
	ctx := context.Background()
	inst := `INSERT INTO service_type_instances (id, project, name, provider_name, service_type, spec, status, version, create_time, update_time)
		VALUES (?, 'default', '', 'vm-sp', 'vm', ?, 'RUNNING', 1, ?, ?)`
	task := `INSERT INTO cleanup_tasks (id, instance_id, provider_name, service_type, requested_at, status, create_time, update_time)
		VALUES (?, ?, 'vm-sp', 'vm', ?, 'PENDING', ?, ?)`
	if db.Engine() == store.Postgres {
		inst = `INSERT INTO service_type_instances (id, project, name, provider_name, service_type, spec, status, version, create_time, update_time)
		VALUES ($1, 'default', '', 'vm-sp', 'vm', $2, 'RUNNING', 1, $3, $4)`
		task = `INSERT INTO cleanup_tasks (id, instance_id, provider_name, service_type, requested_at, status, create_time, update_time)
		VALUES ($1, $2, 'vm-sp', 'vm', $3, 'PENDING', $4, $5)`
	}
	at := time.Now().UTC()
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		for i := range n {
			id := fmt.Sprintf("old-%05d", i)
			if _, err := tx.Exec(ctx, inst, id, []byte(`{"service_type":"vm"}`), at, at); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, task, uuid.NewString(), id, at, at, at); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
}
