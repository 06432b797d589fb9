package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/stewardhq/steward/internal/jobs"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// BenchmarkJobs_FetchFromAnEmptyQueue is River's job fetch on SQLite, which
// each queue runs every 50 ms while idle (store.stableLimits):
//
//	go test -run '^$' -bench FetchFromAnEmptyQueue -benchtime 2000x ./internal/jobs
func BenchmarkJobs_FetchFromAnEmptyQueue(b *testing.B) {
	db := storetest.Open(b, store.SQLite, jobs.Migrator())
	exec := riversqlite.New(db.SQLDB()).GetExecutor()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := exec.JobGetAvailable(ctx, &riverdriver.JobGetAvailableParams{ClientID: "bench", MaxAttemptedBy: 100,
			MaxToLock: 10, Queue: jobs.QueueProviders})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
}
