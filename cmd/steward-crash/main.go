// Command steward-crash runs crash trials against a steward binary: it
// kills the server with SIGKILL under load and checks that nothing
// acknowledged was lost (internal/crashtest). It is a test harness, kept out
// of the product binary: it runs `go build` and reads other domains' tables,
// which the image (scratch) neither can nor should. Run it from a checkout:
//
//	go run ./cmd/steward-crash --trials 200
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError is a command line the command refuses: exit 2, as steward's
// own commands do.
type usageError struct{ error }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := newCrashCmd(stdout)
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	err := cmd.ExecuteContext(ctx)
	switch {
	case err == nil:
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(stderr, "steward-crash: %v (see steward-crash --help)\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "steward-crash: %v\n", err)
		return 1
	}
}
