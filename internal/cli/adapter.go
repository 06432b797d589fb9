package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/adapter"
	"github.com/stewardhq/steward/internal/server"
)

func newAdapterCmd(stderr io.Writer) *cobra.Command {
	var cfg server.AdapterConfig
	var path string
	var logs logFlags
	var check bool
	var token machineToken
	cmd := &cobra.Command{
		Use:   "adapter --config FILE",
		Short: "Run an adapter: reconcile orders in Kubernetes from the sentinel's events",
		Long: `Run an adapter: consume the reconcile events of the service types its config
names, apply or delete the Kubernetes objects the config describes, and
report Applied, Available and Health on each order.

The config (YAML; see examples/adapters/) is checked when it loads: every
problem is printed with its field path and the adapter does not start.
Replicas of one adapter share its durable JetStream consumers, so each event
is handled by one of them at a time; each replica reconciles --workers events at
once, an order's events one after the other. An event is acknowledged only after its
report is stored; a transient failure brings it back with a backoff.

Steward's URL comes from --server or STEWARD_SERVER, and its bearer token (a
service_account bound to the adapter) from --token-file or --token, else
STEWARD_TOKEN_FILE or STEWARD_TOKEN; a token given as --token is visible to
every user of the machine in ps.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := adapter.Load(path)
			if err != nil {
				return err
			}
			if check {
				_, err := io.WriteString(cmd.OutOrStdout(), path+": ok\n")
				return err
			}
			logger, err := logs.logger(stderr)
			if err != nil {
				return err
			}
			cfg.Config, cfg.Logger = c, logger
			if cfg.Token, err = token.resolve(); err != nil {
				return err
			}
			return server.RunAdapter(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&path, "config", "", "the adapter's task config (YAML)")
	_ = cmd.MarkFlagRequired("config")
	f.BoolVar(&check, "check", false, "check the config and exit")
	registerStewardURLs(cmd, "server", &cfg.StewardURLs)
	token.register(cmd, "bearer token for Steward's API")
	f.StringVar(&cfg.NATSURL, "nats-url", "nats://127.0.0.1:4222", "NATS URL of Steward's JetStream (steward server --nats-listen)")
	f.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to manage (empty: in-cluster)")
	f.DurationVar(&cfg.Timeout, "timeout", 0, "longest one reconcile may take (default 5m)")
	f.IntVar(&cfg.Workers, "workers", adapter.DefaultWorkers, "reconciles run at once; one order's events are reconciled one after the other")
	logs.register(f)
	return cmd
}
