package cli

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/ctl"
	"github.com/stewardhq/steward/internal/server"
)

func newMigrateCmd(stdout io.Writer) *cobra.Command {
	var cfg server.MigrateConfig
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Bring a server's database up to this build's schema",
		Long: "Bring a server's database up to this build's schema, and print each migration\n" +
			"applied. It holds the lock replicas migrate under (PostgreSQL advisory lock), so it\n" +
			"may run beside servers; run again, it applies nothing. Migrations only add (expand):\n" +
			"a server of the previous release keeps running on the migrated schema.\n\n" +
			"  steward migrate --database-url postgres://…     # then: steward server --migrate=check\n" +
			"  steward migrate --check --data-dir steward-data  # exit 1 when anything is pending",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{ctl.EnvFlags: "data-dir,database-url"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logger = slog.New(slog.DiscardHandler)
			ms, err := server.Migrate(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if cfg.DryRun {
				for _, m := range ms {
					fmt.Fprintf(stdout, "pending %s\n", m)
				}
				if len(ms) > 0 {
					return fmt.Errorf("the schema is behind this build: %d migrations pending", len(ms))
				}
				fmt.Fprintln(stdout, "the schema is current")
				return nil
			}
			for _, m := range ms {
				fmt.Fprintf(stdout, "applied %s (%s)\n", m, m.Duration.Round(100*time.Microsecond))
			}
			if len(ms) == 0 {
				fmt.Fprintln(stdout, "the schema is current: nothing to apply")
				return nil
			}
			fmt.Fprintf(stdout, "the schema is current: %d migrations applied\n", len(ms))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", "steward-data", "the server's data directory (SQLite)")
	f.StringVar(&cfg.DatabaseURL, "database-url", "", "the server's PostgreSQL URL (postgres://…); empty uses SQLite in --data-dir")
	f.BoolVar(&cfg.DryRun, "check", false, "apply nothing: list what is pending, and exit 1 when anything is")
	return cmd
}
