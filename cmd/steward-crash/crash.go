package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/crashtest"
)

// crashExamples is how many violations the summary quotes per invariant.
const crashExamples = 3

func newCrashCmd(stdout io.Writer) *cobra.Command {
	var (
		cfg     crashtest.Config
		trials  int
		binary  string
		build   bool
		dir     string
		keep    bool
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "steward-crash",
		Short: "Kill the server with SIGKILL under load and check that nothing acknowledged was lost",
		Long: `Run crash trials (issue 8): each starts the steward binary as a child process
on a fresh SQLite data dir (or a fresh schema of --database-url), serves a provider
from this process, drives creates, rehydrates and deletes from several clients
that retry with their Idempotency-Keys, kills the server with SIGKILL at random
moments and restarts it at once, then checks the invariants: every acknowledged
order exists exactly once, each live order's instance is held by the provider,
every other instance the provider holds has a cleanup task, every acknowledged
deletion reaches the provider, every key gets its final answer, every Operation
is done.

The server binary is --binary. Without it, ./cmd/steward of the module in the
working directory is built (go build, without -race, as production runs it)
and tested, so run this from a checkout; the build is removed at the end. The
directories of failed trials (server log, report.txt, report.json) are kept
and printed; passing ones are removed unless --keep.`,
		Example: `  go run ./cmd/steward-crash --trials 200
  go run ./cmd/steward-crash --trials 20 --database-url postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
  go run ./cmd/steward-crash --binary /tmp/steward --trials 5 -v`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if trials < 1 {
				return errors.New("--trials must be at least 1")
			}
			ctx := cmd.Context()
			bin, cleanup, err := crashBinary(ctx, binary, build)
			if err != nil {
				return err
			}
			defer cleanup()
			if dir == "" {
				if dir, err = os.MkdirTemp("", "steward-crash-"); err != nil {
					return err
				}
			}
			level := slog.LevelWarn
			if verbose {
				level = slog.LevelInfo
			}
			cfg.Binary = bin
			cfg.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			return runCrashTrials(ctx, stdout, crashRun{cfg: cfg, trials: trials, dir: dir, keep: keep})
		},
	}
	f := cmd.Flags()
	f.IntVar(&trials, "trials", 10, "number of trials")
	f.StringVar(&cfg.DatabaseURL, "database-url", "", "PostgreSQL server to run on (a schema per trial); empty uses SQLite")
	f.StringVar(&binary, "binary", "", "steward binary to test (default: build one, as --build)")
	f.BoolVar(&build, "build", false, "build ./cmd/steward of the module in the working directory and test that (the default without --binary)")
	f.StringVar(&dir, "dir", "", "directory for the trials' directories (default: a new temporary one)")
	f.BoolVar(&keep, "keep", false, "keep the directories of passing trials too")
	f.IntVar(&cfg.Clients, "clients", 4, "client goroutines per trial")
	f.IntVar(&cfg.Kills, "kills", 3, "SIGKILLs per trial")
	f.DurationVar(&cfg.OpInterval, "op-interval", 40*time.Millisecond, "a client's mean pause between requests")
	f.DurationVar(&cfg.SettleTimeout, "settle-timeout", 30*time.Second, "how long the invariants may take to hold after the load")
	f.BoolVarP(&verbose, "verbose", "v", false, "log each trial's progress on stderr")
	return cmd
}

// crashBinary returns the binary to test, --binary or else a fresh build,
// and what removes that build. The harness is not the server (it used to be
// `steward bench crash`), so there is no executable of its own to fall back on.
func crashBinary(ctx context.Context, binary string, build bool) (string, func(), error) {
	switch {
	case binary != "" && build:
		return "", nil, errors.New("--binary and --build exclude each other")
	case binary != "":
		bin, err := filepath.Abs(binary)
		return bin, func() {}, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", nil, err
	}
	root, err := crashtest.ModuleDir(ctx, wd)
	if err != nil {
		return "", nil, fmt.Errorf("%w (run this from a checkout of steward, or pass --binary)", err)
	}
	out, err := os.MkdirTemp("", "steward-crash-bin-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(out) }
	bin := filepath.Join(out, "steward")
	if err := crashtest.Build(ctx, root, bin); err != nil {
		cleanup()
		return "", nil, err
	}
	return bin, cleanup, nil
}

// crashRun is a series of trials.
type crashRun struct {
	cfg    crashtest.Config
	trials int
	dir    string
	keep   bool
}

// runCrashTrials runs the trials one after the other, prints a line per
// trial and a summary, and fails when a trial did not pass.
func runCrashTrials(ctx context.Context, w io.Writer, run crashRun) error {
	var (
		passed, ran int
		failedDirs  []string
		// trialsBy counts the failed trials per invariant; examples quotes
		// a few of its violations.
		trialsBy = map[string]int{}
		examples = map[string][]string{}
	)
	for i := 1; i <= run.trials; i++ {
		cfg := run.cfg
		cfg.Dir = filepath.Join(run.dir, fmt.Sprintf("trial-%03d", i))
		rep, err := crashtest.Run(ctx, cfg)
		if ctx.Err() != nil {
			break
		}
		ran++
		saveCrashReport(cfg.Dir, rep)
		switch {
		case err != nil:
			fmt.Fprintf(w, "trial %d/%d: could not run: %v\n", i, run.trials, err)
			failedDirs = append(failedDirs, cfg.Dir)
			trialsBy["(could not run)"]++
			examples["(could not run)"] = appendExample(examples["(could not run)"], err.Error())
			continue
		case rep.Pass:
			passed++
			fmt.Fprintf(w, "trial %d/%d: PASS in %.1fs (%d kills, %d creates acknowledged, settled %s after the last restart)\n",
				i, run.trials, rep.Duration.Seconds(), rep.Counts.Kills, rep.Counts.CreatesAcknowledged, rep.Settled.Round(time.Millisecond))
			if !run.keep {
				_ = os.RemoveAll(cfg.Dir)
			}
			continue
		}
		failedDirs = append(failedDirs, cfg.Dir)
		per := map[string]int{}
		for _, v := range rep.Violations {
			if per[v.Invariant] == 0 {
				trialsBy[v.Invariant]++
			}
			per[v.Invariant]++
			if per[v.Invariant] == 1 {
				examples[v.Invariant] = appendExample(examples[v.Invariant], v.Subject+": "+v.Detail)
			}
		}
		fmt.Fprintf(w, "trial %d/%d: FAIL in %.1fs (%d kills, %d creates acknowledged): %d violations", i, run.trials,
			rep.Duration.Seconds(), rep.Counts.Kills, rep.Counts.CreatesAcknowledged, len(rep.Violations))
		for _, inv := range sortedInvariants(per) {
			fmt.Fprintf(w, ", %d %s", per[inv], inv)
		}
		fmt.Fprintf(w, "; %s\n", cfg.Dir)
	}
	fmt.Fprintf(w, "\npassed %d/%d trials", passed, ran)
	if run.cfg.DatabaseURL != "" {
		fmt.Fprintln(w, " on postgres")
	} else {
		fmt.Fprintln(w, " on sqlite")
	}
	for _, inv := range sortedInvariants(trialsBy) {
		fmt.Fprintf(w, "  %s: in %d trials, e.g.\n", inv, trialsBy[inv])
		for _, e := range examples[inv] {
			fmt.Fprintf(w, "    %s\n", e)
		}
	}
	if len(failedDirs) > 0 {
		fmt.Fprintf(w, "failed trials (steward.log, report.txt, report.json in each):\n")
		for _, d := range failedDirs {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if passed < ran {
		return fmt.Errorf("%d of %d crash trials failed", ran-passed, ran)
	}
	return nil
}

// saveCrashReport writes the report into the trial's directory, as text
// and as JSON.
func saveCrashReport(dir string, rep crashtest.Report) {
	_ = os.WriteFile(filepath.Join(dir, "report.txt"), []byte(rep.String()), 0o644)
	if b, err := json.MarshalIndent(rep, "", "  "); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "report.json"), b, 0o644)
	}
}

func appendExample(list []string, s string) []string {
	if len(list) >= crashExamples {
		return list
	}
	return append(list, s)
}

func sortedInvariants(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
