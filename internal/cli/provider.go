package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/processprovider"
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
	var logs logFlags
	var token machineToken
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := logs.logger(stderr)
			if err != nil {
				return err
			}
			cfg.Logger = logger
			if cfg.Token, err = token.resolve(); err != nil {
				return err
			}
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
	f := cmd.Flags()
	registerStewardURLs(cmd, "steward-url", &cfg.StewardURLs)
	f.StringVar(&cfg.Name, "name", "process-sp", "name to register under")
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:9101", "address of the provider API")
	f.StringVar(&cfg.WorkDir, "work-dir", "",
		"directory of the provider's state and its processes' working directories and logs (default: "+stateDirHint(processState)+")")
	f.BoolVar(&cfg.NoOp, "noop", false, "accept orders without starting processes (benchmarks)")
	f.StringSliceVar(&cfg.AllowCommands, "allow-command", nil,
		"a command it runs (spec.process.command[0] as written; repeat it; \"*\": any; default: sleep); any other is refused")
	f.BoolVar(&cfg.AllowRoot, "allow-root", false, "run processes as root when started as root (refused otherwise)")
	logs.register(f)
	token.register(cmd, "bearer token for Steward, empty for a --dev server")
	return cmd
}

// daemon is a provider serving one backend (a server, a cluster).
type daemon interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// runDaemons starts each daemon in turn (named by names, for errors),
// stopping those started when one fails; then it waits until ctx ends and
// stops them all.
func runDaemons(ctx context.Context, names []string, daemons []daemon) error {
	var started []daemon
	stopAll := func() error {
		var errs []error
		for _, d := range started {
			errs = append(errs, d.Stop(context.WithoutCancel(ctx)))
		}
		return errors.Join(errs...)
	}
	for i, d := range daemons {
		if err := d.Start(ctx); err != nil {
			return errors.Join(fmt.Errorf("provider %s: %w", names[i], err), stopAll())
		}
		started = append(started, d)
	}
	<-ctx.Done()
	return stopAll()
}
