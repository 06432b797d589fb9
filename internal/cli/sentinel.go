package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/sentinel"
	"github.com/stewardhq/steward/internal/server"
)

func newSentinelCmd(stderr io.Writer) *cobra.Command {
	var cfg server.SentinelConfig
	var decision string
	var logs logFlags
	cmd := &cobra.Command{
		Use:   "sentinel",
		Short: "Run a sentinel on its own: publish reconcile events for orders that need them",
		Long: `Run a sentinel on its own, beside the servers that share its database.

Every steward server runs a sentinel in-process unless --sentinel-interval is
negative; this command runs one without an API, for example to size it apart.
Several sentinels may run at once: none publishes a decision another already
published. Its events go to the outbox; give --nats-url to publish them from
this process as well as from the servers.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := logs.logger(stderr)
			if err != nil {
				return err
			}
			cfg.Logger = logger
			if cfg.Decision, err = decisionFlag("--decision", decision); err != nil {
				return err
			}
			return server.RunSentinel(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", "steward-data", "directory of the SQLite database (as the server's)")
	f.StringVar(&cfg.DatabaseURL, "database-url", "", "PostgreSQL URL (postgres://…); empty uses SQLite in --data-dir")
	f.StringVar(&cfg.NATSURL, "nats-url", "", "NATS URL to publish the outbox from here too (optional)")
	f.DurationVar(&cfg.Interval, "interval", 0, "time between decision cycles (default 5s)")
	f.DurationVar(&cfg.Debounce, "debounce", 0, "time before a not-ready order gets another reconcile event (default 10s)")
	f.DurationVar(&cfg.MaxAge, "max-age", 0, "time before any order gets another reconcile event (default 30m)")
	f.StringVar(&decision, "decision", "", "YAML file with the message_decision (params, result)")
	f.StringVar(&cfg.Name, "name", "sentinel", "this sentinel's name, in its events' source")
	logs.register(f)
	return cmd
}

// decisionFlag loads the message_decision file a flag names; none when the
// flag is empty.
func decisionFlag(flag, path string) (*sentinel.Decision, error) {
	if path == "" {
		return nil, nil
	}
	d, err := sentinel.LoadDecision(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return d, nil
}
