// Package cli holds the `steward` commands. Each command parses its flags
// (every flag also from a STEWARD_* environment variable) and calls into the
// packages that do the work; no logic lives here.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stewardhq/steward/internal/buildinfo"
	"github.com/stewardhq/steward/internal/ctl"
)

// Main runs the command line args and returns the process exit code: 0,
// 1 for an error, 2 for a usage error (ctl.ExitCode).
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return MainContext(ctx, args, os.Stdin, stdout, stderr)
}

// MainContext is Main under ctx, reading standard input from stdin.
func MainContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetIn(stdin)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		if isCobraUsage(err) {
			err = &ctl.UsageError{Msg: err.Error()}
		}
		path := ""
		if cmd != nil {
			path = cmd.CommandPath()
		}
		ctl.PrintError(stderr, path, err)
	}
	return ctl.ExitCode(err)
}

// isCobraUsage says whether err is cobra's own complaint about a command
// line (an unknown command; flag errors come through SetFlagErrorFunc).
func isCobraUsage(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command ")
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "steward",
		Short: "Steward, a service lifecycle control plane",
		Long: "Steward, a service lifecycle control plane.\n\n" +
			"`steward server` runs the control plane; the other commands are its client\n" +
			"(get, describe, order, apply, …), talking to --server (STEWARD_SERVER, default\n" +
			ctl.DefaultServer + ") with --token (STEWARD_TOKEN), or to a context of\n" +
			"the config file (steward config).",
		Version:       buildinfo.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return flagsFromEnv(cmd.Flags(), envFlagsOf(cmd))
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &ctl.UsageError{Msg: err.Error()} })
	root.AddGroup(&cobra.Group{ID: "client", Title: "Client commands (talk to a server):"},
		&cobra.Group{ID: "run", Title: "Running Steward:"})
	for _, c := range []*cobra.Command{newServerCmd(stderr), newBenchCmd(stdout), newProviderCmd(stderr), newTokenCmd(stdout),
		newSentinelCmd(stderr), newAdapterCmd(stderr), newMigrateCmd(stdout), newHealthcheckCmd(stdout)} {
		c.GroupID = "run"
		root.AddCommand(c)
	}
	for _, c := range ctl.Commands(stdout, stderr) {
		c.GroupID = "client"
		root.AddCommand(c)
	}
	root.SetHelpCommandGroupID("client")
	root.SetCompletionCommandGroupID("client")
	return root
}

// envFlagsOf is the set of flags cmd reads from the environment: those its
// ctl.EnvFlags annotation lists, or every flag when it has none.
func envFlagsOf(cmd *cobra.Command) func(string) bool {
	list, ok := cmd.Annotations[ctl.EnvFlags]
	if !ok {
		return func(string) bool { return true }
	}
	names := strings.Split(list, ",")
	return func(name string) bool { return slices.Contains(names, name) }
}

// flagsFromEnv sets every allowed flag the command line left alone from its
// environment variable: --database-url ← STEWARD_DATABASE_URL.
func flagsFromEnv(fs *pflag.FlagSet, allowed func(name string) bool) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil || !allowed(f.Name) {
			return
		}
		name := EnvName(f.Name)
		if v, ok := os.LookupEnv(name); ok {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s: %w", name, serr)
			}
		}
	})
	return err
}

func envSet(flag string) bool {
	_, ok := os.LookupEnv(EnvName(flag))
	return ok
}

// EnvName is the environment variable for a flag.
func EnvName(flag string) string {
	return "STEWARD_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}
