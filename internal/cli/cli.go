// Package cli holds the `steward` commands. Each command parses its flags
// (every flag also from a STEWARD_* environment variable) and calls into the
// packages that do the work; no logic lives here.
package cli

import (
	"cmp"
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
			return flagsFromEnv(cmd)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(ctl.FlagError)
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
	completeFromEnv(root)
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands has each command below root that only groups
// others (steward provider, steward config) refuse a mistyped subcommand
// as root does, with cobra's suggestions: cobra checks only the root's, and
// would print the group's help and exit 0.
func refuseUnknownSubcommands(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		if sub.HasSubCommands() && !sub.Runnable() {
			sub.Args = cobra.ArbitraryArgs
			sub.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return cmd.Help()
				}
				msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
				cmd.SuggestionsMinimumDistance = cmp.Or(cmd.SuggestionsMinimumDistance, 2) // cobra's default
				if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
					msg += "\n\nDid you mean this?\n\t" + strings.Join(near, "\n\t") + "\n"
				}
				return &ctl.UsageError{Msg: msg}
			}
		}
		refuseUnknownSubcommands(sub)
	}
}

// completeFromEnv has every completion of cmd and its subcommands read the
// environment first, as a run does: a shell completes the ids of the
// server STEWARD_SERVER names. Cobra runs no PersistentPreRunE for a
// completion.
func completeFromEnv(cmd *cobra.Command) {
	if complete := cmd.ValidArgsFunction; complete != nil {
		cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if err := flagsFromEnv(cmd); err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
			}
			return complete(cmd, args, toComplete)
		}
	}
	for _, sub := range cmd.Commands() {
		completeFromEnv(sub)
	}
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

// flagsFromEnv sets every flag of cmd it reads from the environment
// (envFlagsOf) that the command line left alone from its variable
// (EnvName): --database-url ← STEWARD_DATABASE_URL. It is how every
// command, and every completion, reads the environment.
func flagsFromEnv(cmd *cobra.Command) error {
	return setFromEnv(cmd.Flags(), envFlagsOf(cmd))
}

func setFromEnv(fs *pflag.FlagSet, allowed func(name string) bool) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil || !allowed(f.Name) || rivalGiven(fs, f.Name) {
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

// rivals are flags that give one setting two ways: when the command line
// gives one of them, the environment gives neither (--token-file beats
// STEWARD_TOKEN, and --token beats STEWARD_TOKEN_FILE).
var rivals = [][]string{{"token", "token-file"}}

// rivalGiven says whether the command line gave a rival of the flag.
func rivalGiven(fs *pflag.FlagSet, flag string) bool {
	for _, group := range rivals {
		if !slices.Contains(group, flag) {
			continue
		}
		for _, other := range group {
			if f := fs.Lookup(other); other != flag && f != nil && f.Changed {
				return true
			}
		}
	}
	return false
}

func envSet(flag string) bool {
	_, ok := os.LookupEnv(EnvName(flag))
	return ok
}

// envServer and envToken are where every command that takes a Steward URL
// or a bearer token reads them when its command line gives none: the
// client's --server and --token, a provider's --steward-url and --token,
// an adapter's --server and --token, the completions.
const (
	envServer = "STEWARD_SERVER"
	envToken  = "STEWARD_TOKEN"
)

// EnvName is the environment variable for a flag: STEWARD_<FLAG>, upper
// case with - as _, except that a provider's --steward-url is the Steward
// URL every command reads from STEWARD_SERVER.
func EnvName(flag string) string {
	if flag == "steward-url" {
		return envServer
	}
	return "STEWARD_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}
