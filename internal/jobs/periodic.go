package jobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// periodicArgs names the Periodic to run. One worker kind serves them all, so
// adding a periodic job needs no new River type.
type periodicArgs struct {
	Name string `json:"name"`
}

func (periodicArgs) Kind() string { return "steward.periodic" }

type periodicWorker struct {
	river.WorkerDefaults[periodicArgs]
	byName map[string]Periodic
}

func (w *periodicWorker) Work(ctx context.Context, job *river.Job[periodicArgs]) error {
	p, ok := w.byName[job.Args.Name]
	if !ok {
		// A job enqueued by a version that had this periodic job; nothing to do.
		return river.JobCancel(fmt.Errorf("no periodic job named %q", job.Args.Name))
	}
	return p.Run(ctx)
}

// notFinished are the states in which a periodic run blocks the next.
var notFinished = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled}

func registerPeriodic(workers *Workers, ps []Periodic) ([]*river.PeriodicJob, error) {
	w := &periodicWorker{byName: map[string]Periodic{}}
	var jobs []*river.PeriodicJob
	for _, p := range ps {
		if p.Name == "" || p.Interval <= 0 || p.Run == nil {
			return nil, fmt.Errorf("jobs: periodic job %q needs a name, an interval and a function", p.Name)
		}
		if _, dup := w.byName[p.Name]; dup {
			return nil, fmt.Errorf("jobs: periodic job %q defined twice", p.Name)
		}
		w.byName[p.Name] = p
		name, interval := p.Name, p.Interval
		jobs = append(jobs, river.NewPeriodicJob(river.PeriodicInterval(interval),
			func() (river.JobArgs, *river.InsertOpts) {
				// No run is inserted while one is waiting or running, on any
				// replica (a dead replica's is reaped at once by its peers):
				// a run slower than its interval never overlaps the next
				// (the cluster trial saw provider_health, every 500ms, on
				// two replicas at once), nor does a new leader's first run
				// overlap the dead leader's. Not unique per period as well:
				// River puts the period in the unique key, so a run of the
				// last period would no longer block this one's (the trial
				// then saw cleanup run twice at once on one replica).
				opts := &river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: notFinished}}
				return periodicArgs{Name: name}, opts
			}, &river.PeriodicJobOpts{ID: name, RunOnStart: p.RunOnStart}))
	}
	if err := river.AddWorkerSafely(workers, w); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return jobs, nil
}
