// Package cli holds the `steward` commands. Each command parses its flags
// (every flag also from a STEWARD_* environment variable) and calls into the
// packages that do the work; no logic lives here.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Main runs the command line args and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "steward:", err)
		return 1
	}
	return 0
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "steward",
		Short:         "Steward, a service lifecycle control plane",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return flagsFromEnv(cmd.Flags())
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newServerCmd(stderr), newBenchCmd(stdout), newProviderCmd(stderr), newTokenCmd(stdout),
		newSentinelCmd(stderr), newAdapterCmd(stderr))
	return root
}

// flagsFromEnv sets every flag the command line left alone from its
// environment variable: --database-url ← STEWARD_DATABASE_URL.
func flagsFromEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil {
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

// jsonLogger is the JSON logger of a long-running command, at the level
// --log-level names.
func jsonLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}
