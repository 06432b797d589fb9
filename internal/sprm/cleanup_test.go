package sprm_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

func TestDeferredDelete_NeverCallsTheProviderSynchronously(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		// No cleanup worker runs here, so only the request itself could
		// have called the provider.
		e := setup(t, engine, func(c *server.Config) { c.CleanupInterval = -1 })
		e.create(t, "old")
		var in instance
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/old?deferred=true", nil).Want(t, http.StatusOK).JSON(t, &in)
		if in.Deletion == nil || in.Deletion.Status != "PENDING" || in.Deletion.CleanupTaskID == "" {
			t.Fatalf("deferred delete answered %+v, want deletion PENDING with a task id", in)
		}
		if n := len(e.p.Deletes()); n != 0 {
			t.Fatalf("a deferred delete contacted the provider (%d deletes)", n)
		}
		task, status := e.task(t, in.Deletion.CleanupTaskID)
		if status != http.StatusOK || task.InstanceID != "old" || task.Status != "PENDING" || task.RetryCount != 0 {
			t.Fatalf("cleanup task %+v (%d)", task, status)
		}
		// request_time and last_attempt_time (AEP-142 names) repeat the
		// deprecated requested_at and last_attempt.
		if task.RequestTime.IsZero() || !task.RequestTime.Equal(task.RequestedAt) || task.LastAttemptTime != nil || task.LastAttempt != nil {
			t.Fatalf("cleanup task times: request_time %v, requested_at %v, last_attempt_time %v, last_attempt %v; "+
				"want request_time = requested_at and no attempt yet", task.RequestTime, task.RequestedAt, task.LastAttemptTime, task.LastAttempt)
		}
		// The instance's deletion was requested when the task was.
		if in.DeleteTime == nil || !in.DeleteTime.Equal(task.RequestTime) || in.DeletedAt != nil {
			t.Fatalf("queued deletion: delete_time %v, deleted_at %v; want the task's request_time %v and no deleted_at",
				in.DeleteTime, in.DeletedAt, task.RequestTime)
		}
		// Repeating it is harmless: the same task, the same delete_time.
		var again instance
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/old?deferred=true", nil).Want(t, http.StatusOK).JSON(t, &again)
		if again.Deletion == nil || again.Deletion.CleanupTaskID != in.Deletion.CleanupTaskID ||
			again.DeleteTime == nil || !again.DeleteTime.Equal(*in.DeleteTime) {
			t.Fatalf("second deferred delete: %+v, delete_time %v (was %v)", again.Deletion, again.DeleteTime, in.DeleteTime)
		}
	})
}

func TestDelete_CallsTheProvider(t *testing.T) {
	t.Parallel()
	e := setup(t, store.SQLite)
	e.create(t, "vm-1")
	var in instance
	e.s.Do(t, "DELETE", "/api/v1/service-type-instances/vm-1", nil).Want(t, http.StatusAccepted).JSON(t, &in)
	e.p.WaitForCall(t, providertest.MethodDelete, "vm-1")
	if in.Status != "DELETING" && in.Status != "DELETED" {
		t.Fatalf("after delete: %+v", in)
	}
	// Gone from the default view once the provider reports DELETED.
	e.s.Do(t, "PUT", "/api/v1/service-type-instances/vm-1/status", map[string]any{"status": "DELETED", "observed_time": "2099-01-01T00:00:00Z"}).
		Want(t, http.StatusOK)
	e.s.Do(t, "GET", "/api/v1/service-type-instances/vm-1", nil).WantProblem(t, http.StatusNotFound, "INSTANCE_NOT_FOUND")
	if got := e.instance(t, "vm-1"); got.DeletedAt == nil {
		t.Fatalf("show_deleted view %+v lacks deleted_at", got)
	}
}

func TestCleanup_RetriesWhileTheProviderFailsAndFinishesWhenBack(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine, func(c *server.Config) { c.CleanupMaxRetries = 1000 })
		e.create(t, "old")
		e.p.FailDeletes(http.StatusInternalServerError)
		var in instance
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/old?deferred=true", nil).Want(t, http.StatusOK).JSON(t, &in)
		taskID := in.Deletion.CleanupTaskID
		poll.Until(t, "failed attempts are counted", func() bool {
			task, _ := e.task(t, taskID)
			return task.RetryCount >= 2 && task.LastAttempt != nil && task.LastError != "" && task.Status != "FAILED"
		})
		if task, _ := e.task(t, taskID); task.LastAttemptTime == nil || task.LastAttempt == nil || !task.LastAttemptTime.Equal(*task.LastAttempt) {
			t.Fatalf("last_attempt_time %v, want last_attempt %v", task.LastAttemptTime, task.LastAttempt)
		}
		e.p.SucceedDeletes()
		poll.Until(t, "the task is removed once the provider deletes", func() bool { _, code := e.task(t, taskID); return code == 404 })
		if got := e.instance(t, "old"); got.Status != "DELETED" || got.DeletedAt == nil {
			t.Fatalf("after cleanup: %+v", got)
		}
	})
}

func TestCleanup_SkipsAnUnavailableProviderUntilItIsBack(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		e.create(t, "old")
		e.p.GoDown()
		poll.Until(t, "the provider is unavailable", func() bool { return e.providerStatus(t) == "unavailable" })
		var in instance
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/old?deferred=true", nil).Want(t, http.StatusOK).JSON(t, &in)
		// Several cleanup passes run while it is down; none counts as a failure.
		e.s.Do(t, "GET", "/metrics", nil)
		poll.Until(t, "some passes skipped the task", func() bool {
			return contains(string(e.s.Do(t, "GET", "/metrics", nil).Body), `steward_cleanup_tasks_total{outcome="skipped"}`)
		})
		if task, _ := e.task(t, in.Deletion.CleanupTaskID); task.RetryCount != 0 || task.Status == "FAILED" {
			t.Fatalf("a skipped task was counted as a failure: %+v", task)
		}
		e.p.ComeBack()
		e.p.WaitForCall(t, providertest.MethodDelete, "old")
		poll.Until(t, "cleanup finishes once the provider is back", func() bool { return e.instance(t, "old").Status == "DELETED" })
	})
}

func TestCleanup_FailedAfterMaxRetriesAndRetryRevivesIt(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine) // CleanupMaxRetries 3
		e.create(t, "old")
		e.p.FailDeletes(http.StatusInternalServerError)
		var in instance
		e.s.Do(t, "DELETE", "/api/v1/service-type-instances/old?deferred=true", nil).Want(t, http.StatusOK).JSON(t, &in)
		taskID := in.Deletion.CleanupTaskID
		e.s.Do(t, "POST", "/api/v1/cleanup-tasks/"+taskID+":retry", nil).WantProblem(t, http.StatusConflict, "CLEANUP_TASK_NOT_FAILED")
		poll.Until(t, "the task is FAILED after 3 attempts", func() bool { task, _ := e.task(t, taskID); return task.Status == "FAILED" })
		if task, _ := e.task(t, taskID); task.RetryCount != 3 {
			t.Fatalf("FAILED task has retry_count %d, want 3", task.RetryCount)
		}
		var failed struct {
			Results []cleanupTask `json:"results"`
		}
		e.s.Do(t, "GET", "/api/v1/cleanup-tasks?status=FAILED", nil).Want(t, 200).JSON(t, &failed)
		if len(failed.Results) != 1 || failed.Results[0].ID != taskID {
			t.Fatalf("FAILED list = %+v", failed.Results)
		}
		if !contains(string(e.s.Do(t, "GET", "/metrics", nil).Body), `steward_cleanup_tasks_total{outcome="failed"} 1`) {
			t.Error("the FAILED task is not counted in the metrics")
		}

		e.p.SucceedDeletes()
		var revived cleanupTask
		e.s.Do(t, "POST", "/api/v1/cleanup-tasks/"+taskID+":retry", nil).Want(t, http.StatusOK).JSON(t, &revived)
		if revived.Status != "PENDING" || revived.RetryCount != 0 {
			t.Fatalf(":retry answered %+v, want PENDING with retry_count 0", revived)
		}
		poll.Until(t, "the revived task completes", func() bool { _, code := e.task(t, taskID); return code == 404 })
		e.s.Do(t, "POST", "/api/v1/cleanup-tasks/"+taskID+":retry", nil).WantProblem(t, http.StatusNotFound, "CLEANUP_TASK_NOT_FOUND")

		// The audit log has the failure, the operator's retry and the finish.
		var actions []string
		for _, r := range e.auditEvents(t, "cleanup_task:"+taskID) {
			actions = append(actions, r.Action+"/"+r.Outcome)
		}
		want := "cleanup_task.retry/error cleanup_task.failed/error cleanup_task.retry/success cleanup_task.finished/success " +
			"cleanup_task.retry/error"
		if strings.Join(actions, " ") != want {
			t.Errorf("audit records of the task: %v, want %s", actions, want)
		}
	})
}

func TestCleanup_TasksSurviveARestart(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		for _, id := range ids(3, "old") {
			e.create(t, id)
		}
		e.p.GoDown()
		poll.Until(t, "the provider is unavailable", func() bool { return e.providerStatus(t) == "unavailable" })
		for _, id := range ids(3, "old") {
			e.s.Do(t, "DELETE", "/api/v1/service-type-instances/"+id+"?deferred=true", nil).Want(t, http.StatusOK)
		}
		e.s = e.s.Restart(t)
		var pending struct {
			Results []cleanupTask `json:"results"`
		}
		e.s.Do(t, "GET", "/api/v1/cleanup-tasks", nil).Want(t, 200).JSON(t, &pending)
		if len(pending.Results) != 3 {
			t.Fatalf("after restart %d tasks, want 3", len(pending.Results))
		}
		e.p.ComeBack()
		for _, id := range ids(3, "old") {
			poll.Until(t, id+" is deleted after the restart", func() bool { return e.instance(t, id).Status == "DELETED" })
		}
	})
}
