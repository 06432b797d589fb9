package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/processprovider"
	"github.com/stewardhq/steward/internal/providerhost"
)

func newProviderCmd(stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "provider",
		Short: "Run one of Steward's reference service providers",
	}
	cmd.AddCommand(newProcessProviderCmd(stderr), newPostgresProviderCmd(stderr), newKubernetesProviderCmd(stderr))
	return cmd
}

var processState = providerState{provider: "process", legacy: "process-provider-data",
	what: "the work directory of the instances this provider runs", flag: "--work-dir"}

func newProcessProviderCmd(stderr io.Writer) *cobra.Command {
	var cfg processprovider.DaemonConfig
	var settings providerhost.Settings
	var shared *providerFlags
	cmd := &cobra.Command{
		Use:   "process",
		Short: "Realise container orders as supervised local processes",
		Long: `Realise container orders as supervised local processes (like Nomad's raw_exec):
spec.process.command, args and env name the process; restart_policy and
max_restarts say what happens when it exits. The provider registers with
Steward (retrying until accepted) and reports RUNNING, FAILED and DELETED,
retrying each report until Steward takes it. Give every Steward replica's
URL with --steward-url (or STEWARD_SERVER, comma-separated): the provider
moves on to the next one that answers.
The processes run as this user without isolation: run it as a user of its
own, never as root (it refuses to, unless --allow-root), and name the
commands it may run with --allow-command (by default only sleep, the dev
catalog's).

Its bearer token (a service_account bound to the provider; none for a --dev
server) comes from --token-file or --token, else STEWARD_TOKEN_FILE or
STEWARD_TOKEN; a token given as --token is visible to every user of the
machine in ps. A flag on the command line beats the environment.

The provider's state (what it runs, for a restart to find again) and its
processes' working directories are kept in --work-dir, by default
$XDG_STATE_HOME/steward/process (~/.local/state/steward/process), created
0700; it refuses to start while a process-provider-data an earlier version
made in the current directory is there, and says where it now belongs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if cfg.Logger, err = shared.logs.logger(stderr); err != nil {
				return err
			}
			if err := shared.resolveToken(); err != nil {
				return err
			}
			cfg.Name, cfg.Listen, cfg.StewardURLs, cfg.Token = settings.Name, settings.Listen, settings.StewardURLs, settings.Token
			if cfg.WorkDir == "" {
				if cfg.WorkDir, err = processState.path("", ""); err != nil {
					return err
				}
			}
			d := processprovider.NewDaemon(cfg)
			if err := d.Start(cmd.Context()); err != nil {
				return err
			}
			cfg.Logger.Info("process provider listening", "url", d.URL(), "steward_urls", cfg.StewardURLs)
			<-cmd.Context().Done()
			return d.Stop(context.WithoutCancel(cmd.Context()))
		},
	}
	shared = newProviderFlags(cmd, &settings, processprovider.Name, "127.0.0.1:9101")
	f := cmd.Flags()
	f.StringVar(&cfg.WorkDir, "work-dir", "",
		"directory of the provider's state and its processes' working directories and logs (default: "+stateDirHint(processState)+")")
	f.BoolVar(&cfg.NoOp, "noop", false, "accept orders without starting processes (benchmarks)")
	f.StringSliceVar(&cfg.AllowCommands, "allow-command", nil,
		"a command it runs (spec.process.command[0] as written; repeat it; \"*\": any; default: sleep); any other is refused")
	f.BoolVar(&cfg.AllowRoot, "allow-root", false, "run processes as root when started as root (refused otherwise)")
	return cmd
}

// daemon is a provider serving one backend (a server, a cluster).
type daemon interface {
	// Name is the provider's registered name, for errors.
	Name() string
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// runDaemons starts each daemon in turn, stopping those started when one
// fails; then it waits until ctx ends and stops them all.
func runDaemons(ctx context.Context, daemons []daemon) error {
	var started []daemon
	stopAll := func() error {
		var errs []error
		for _, d := range started {
			errs = append(errs, d.Stop(context.WithoutCancel(ctx)))
		}
		return errors.Join(errs...)
	}
	for _, d := range daemons {
		if err := d.Start(ctx); err != nil {
			return errors.Join(fmt.Errorf("provider %s: %w", d.Name(), err), stopAll())
		}
		started = append(started, d)
	}
	<-ctx.Done()
	return stopAll()
}

// serveBackends runs the daemons (newDaemon) of a provider that may serve
// several backends. Without specs of b it serves the one the command's
// flags name: cfg, which they fill (shared its settings), completed by
// resolveSingle and labelled by --label. Given specs, it serves one a spec
// (parse, from cfg).
func serveBackends[C any, D daemon](cmd *cobra.Command, shared *providerFlags, b *backendsFlag, cfg *C,
	resolveSingle func() error, parse func(b *backendsFlag, spec string, base C) (C, error), newDaemon func(C) D) error {
	var configs []C
	if len(b.specs) == 0 {
		if err := resolveSingle(); err != nil {
			return err
		}
		if err := shared.parseLabels(); err != nil {
			return err
		}
		configs = append(configs, *cfg)
	} else {
		if err := b.refuseSingles(cmd); err != nil {
			return err
		}
		for _, spec := range b.specs {
			c, err := parse(b, spec, *cfg)
			if err != nil {
				return err
			}
			configs = append(configs, c)
		}
	}
	daemons := make([]daemon, len(configs))
	for i, c := range configs {
		daemons[i] = newDaemon(c)
	}
	return runDaemons(cmd.Context(), daemons)
}
