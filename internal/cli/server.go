package cli

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/server"
)

func newServerCmd(stderr io.Writer) *cobra.Command {
	var cfg server.Config
	var logLevel string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Serve the Steward API with its background workers",
		Long: `Serve the Steward API with its background workers.

By default Steward keeps its state in an embedded SQLite database and an
embedded NATS JetStream server under --data-dir. Give --database-url for
PostgreSQL and --nats-url for an external NATS cluster to run several replicas.
Every flag can also be set as STEWARD_<FLAG> (e.g. STEWARD_DATABASE_URL).
SIGINT or SIGTERM stops the server gracefully.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			cfg.Logger = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
			return server.Run(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&cfg.Dev, "dev", false, "development mode: embedded defaults and NO authentication")
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:8080", "HTTP listen address")
	f.StringVar(&cfg.DataDir, "data-dir", "steward-data", "directory for the SQLite database and the embedded NATS store")
	f.StringVar(&cfg.DatabaseURL, "database-url", "", "PostgreSQL URL (postgres://…); empty uses SQLite in --data-dir")
	f.StringVar(&cfg.NATSURL, "nats-url", "", "external NATS URL (nats://…); empty runs NATS embedded")
	f.StringVar(&cfg.APIToken, "api-token", "", "administrator bearer token (required without --dev)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(&cfg.TraceExporter, "trace-exporter", "", `OpenTelemetry span exporter: "stdout", or empty for none`)
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 0, "how long a graceful stop may take (default 20s)")
	return cmd
}
