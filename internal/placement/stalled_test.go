package placement_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A rehydration whose job River gave up on (discarded) must not leave its
// operation running and the order refusing every rehydration with 409
// forever: the stalled-work sweep fails it, so the order can be
// rehydrated again. Work whose job is still queued is left alone.
func TestSweepStalled_FinishesARehydrationWhoseJobWasGivenUp(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		o := e.upOrder(t, "web", 2)
		// No job runs from here, so the rehydrate job stays queued.
		e.s = e.s.Restart(t, func(c *server.Config) { c.PauseJobs = true })
		path := "/api/v1/catalog-item-instances/web:rehydrate"
		op := e.rehydrate(t, path, nil, "catalog-item-instances/web", o.InstanceID)
		ctx := context.Background()
		db := e.s.DB()
		past := store.Now(nil).Add(-2 * time.Minute)
		backdate := "UPDATE resources SET update_time = ? WHERE rehydration_status = 'RUNNING'"
		discard := "UPDATE river_job SET state = 'discarded', finalized_at = datetime('now') WHERE kind = 'placement.rehydrate'"
		if engine == store.Postgres {
			backdate = "UPDATE resources SET update_time = $1 WHERE rehydration_status = 'RUNNING'"
			discard = "UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE kind = 'placement.rehydrate'"
		}
		if _, err := db.Exec(ctx, backdate, past); err != nil {
			t.Fatal(err)
		}

		// Still queued: in progress, not stalled.
		if n, err := e.s.Placement().SweepStalled(ctx); err != nil || n != 0 {
			t.Fatalf("sweep with the job queued = %d, %v; want nothing finished", n, err)
		}
		e.s.Do(t, "POST", path, nil).WantProblem(t, http.StatusConflict, "REHYDRATION_IN_PROGRESS")

		if _, err := db.Exec(ctx, discard); err != nil {
			t.Fatal(err)
		}
		if n, err := e.s.Placement().SweepStalled(ctx); err != nil || n != 1 {
			t.Fatalf("sweep with the job discarded = %d, %v; want the rehydration finished", n, err)
		}
		var got operation
		e.s.Do(t, "GET", "/api/v1/operations/"+op.ID, nil).Want(t, http.StatusOK).JSON(t, &got)
		if !got.Done || len(got.Error) == 0 {
			t.Errorf("operation after the sweep = %+v, want done with an error", got)
		}
		if cur := e.order(t, "web"); cur.InstanceID != o.InstanceID {
			t.Errorf("order moved to %s, want it still on %s", cur.InstanceID, o.InstanceID)
		}
		e.rehydrate(t, path, nil, "catalog-item-instances/web", o.InstanceID)
	})
}

// A first create whose job River gave up on, with nothing answered, fails
// its order once stalled; an order whose create was answered long ago is
// not stalled, however old its resource. The answer is recorded on the
// resource (so the sweep's index holds only what waits); one a process
// died before recording is recorded by the sweep, from its instance.
func TestSweepStalled_FailsAFirstCreateWhoseJobWasGivenUp(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		up := e.upOrder(t, "up", 2)
		// The answer is recorded once the provision job has the provider's
		// answer, which may be after the order is up.
		poll.Until(t, "up's create recorded on its resource", func() bool {
			return e.resourceColumnStatus(t, up.InstanceID) != "PENDING"
		})
		e.s = e.s.Restart(t, func(c *server.Config) { c.PauseJobs = true })
		var lost order
		e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id=lost", orderBody(2)).Want(t, http.StatusCreated).JSON(t, &lost)
		ctx := context.Background()
		db := e.s.DB()
		past := store.Now(nil).Add(-2 * time.Minute)
		// As if the process died between up's answer and its record.
		backdate := "UPDATE resources SET update_time = ?, status = 'PENDING'"
		discard := "UPDATE river_job SET state = 'discarded', finalized_at = datetime('now') WHERE kind = 'placement.provision'"
		if engine == store.Postgres {
			backdate = "UPDATE resources SET update_time = $1, status = 'PENDING'"
			discard = "UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE kind = 'placement.provision'"
		}
		if _, err := db.Exec(ctx, backdate, past); err != nil {
			t.Fatal(err)
		}
		if n, err := e.s.Placement().SweepStalled(ctx); err != nil || n != 0 {
			t.Fatalf("sweep with lost's job queued = %d, %v; want nothing finished", n, err)
		}
		if _, err := db.Exec(ctx, discard); err != nil {
			t.Fatal(err)
		}
		if n, err := e.s.Placement().SweepStalled(ctx); err != nil || n != 1 {
			t.Fatalf("sweep with lost's job discarded = %d, %v; want lost failed, and up left alone", n, err)
		}
		if r := e.resource(t, lost.InstanceID); r.Status != "FAILED" {
			t.Errorf("lost's resource is %s, want FAILED", r.Status)
		}
		if r := e.resource(t, up.InstanceID); r.Status != "RUNNING" {
			t.Errorf("up's resource is %s, want RUNNING still", r.Status)
		}
		if got := e.resourceColumnStatus(t, up.InstanceID); got != "RUNNING" {
			t.Errorf("up's resource row after the sweep is %s, want its instance's RUNNING recorded", got)
		}
	})
}

// resourceColumnStatus is the status column of a resource's row, which the
// API does not show once the instance exists (it shows the instance's).
func (e *env) resourceColumnStatus(t *testing.T, instanceID string) string {
	t.Helper()
	q := "SELECT status FROM resources WHERE instance_id = ?"
	if e.s.DB().Engine() == store.Postgres {
		q = "SELECT status FROM resources WHERE instance_id = $1"
	}
	var status string
	if err := e.s.DB().QueryRow(context.Background(), q, instanceID).Scan(&status); err != nil {
		t.Fatalf("read %s's resource row: %v", instanceID, err)
	}
	return status
}
