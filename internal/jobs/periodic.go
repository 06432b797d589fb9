package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
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
				opts := &river.InsertOpts{MaxAttempts: 3}
				// Unique per period, so a leader change never doubles a run.
				// River's periods start at 1s; shorter intervals (tests) go without.
				if interval >= time.Second {
					opts.UniqueOpts = river.UniqueOpts{ByArgs: true, ByPeriod: interval}
				}
				return periodicArgs{Name: name}, opts
			}, &river.PeriodicJobOpts{ID: name, RunOnStart: p.RunOnStart}))
	}
	if err := river.AddWorkerSafely(workers, w); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return jobs, nil
}
