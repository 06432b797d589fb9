package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/ctl"
	"github.com/stewardhq/steward/internal/server"
)

// secondSignal returns a channel closed by a SIGINT or SIGTERM that comes
// after ctx ended (the first one ends it): the server's drain is then cut
// short. stop releases the signals.
func secondSignal(ctx context.Context) (hurry <-chan struct{}, stop func()) {
	ch := make(chan struct{})
	sigs := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		select {
		case <-sigs:
			close(ch)
		case <-done:
		}
	}()
	return ch, func() { close(done); signal.Stop(sigs) }
}

// serverGCPercent is the server's GOGC unless the environment sets one. The
// server's live heap is small (tens of MB) and allocates fast, so at Go's
// default of 100 it collects many times a second: 400 gave 10% more
// creates per second for about 60 MB more memory under load.
const serverGCPercent = 400

func setGCPercent() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
}

// cidrsFlag parses a flag's CIDRs (and only CIDRs: an allow list is
// written as ranges). Given empty, it allows nothing, not the default.
func cidrsFlag(flag string, cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(cidrs))
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, &ctl.UsageError{Msg: fmt.Sprintf("%s: %q is not a CIDR such as 10.0.0.0/8", flag, c)}
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// prefixesFlag parses the addresses or CIDRs given to flag: a bare
// address is a prefix of its full length.
func prefixesFlag(flag string, values []string) ([]netip.Prefix, error) {
	var prefixes []netip.Prefix
	for _, v := range values {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil {
				return nil, &ctl.UsageError{Msg: fmt.Sprintf("%s: %q is neither an address nor a CIDR", flag, v)}
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		prefixes = append(prefixes, p.Masked())
	}
	return prefixes, nil
}

func newServerCmd(stderr io.Writer) *cobra.Command {
	var cfg server.Config
	var decision, migrate, natsTokenFile string
	var logs logFlags
	var logRequests bool
	var allowCIDRs []string
	var trustedProxies []string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Serve the Steward API with its background workers",
		Long: `Serve the Steward API with its background workers.

By default Steward keeps its state in an embedded SQLite database and an
embedded NATS JetStream server under --data-dir. Give --database-url for
PostgreSQL and --nats-url for an external NATS cluster to run several replicas.
Every flag can also be set as STEWARD_<FLAG> (e.g. STEWARD_DATABASE_URL).
SIGINT or SIGTERM stops the server gracefully: /readyz answers 503 at once, requests
are served on for --drain-delay (a second signal cuts it short), then the listener
closes, requests in flight and running jobs finish (jobs still running after most of
--shutdown-timeout are handed back, to be retried), and the process exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := logs.logger(stderr)
			if err != nil {
				return err
			}
			cfg.Logger = logger
			if cfg.Dev && !logRequests {
				cfg.RequestLogLevel = slog.LevelDebug // a laptop's terminal is for what happens, not every poll
			}
			if cfg.SentinelDecision, err = decisionFlag("--sentinel-decision", decision); err != nil {
				return err
			}
			if err := inProcessProvider(cmd, &cfg); err != nil {
				return err
			}
			if !cmd.Flags().Changed("drain-delay") && !envSet("drain-delay") && cfg.Dev {
				cfg.DrainDelay = 0 // nothing routes to a laptop's server: Ctrl-C stops it at once
			}
			if migrate != "auto" && migrate != "check" {
				return &ctl.UsageError{Msg: fmt.Sprintf("--migrate: %q is neither auto nor check", migrate)}
			}
			cfg.Migrate = migrate
			if cfg.ProviderAllowCIDRs, err = cidrsFlag("--provider-allow-cidr", allowCIDRs); err != nil {
				return err
			}
			if cfg.TrustedProxies, err = prefixesFlag("--trusted-proxy", trustedProxies); err != nil {
				return err
			}
			if natsTokenFile != "" {
				b, err := os.ReadFile(natsTokenFile)
				if err != nil {
					return fmt.Errorf("--nats-token-file: %w", err)
				}
				if cfg.NATSToken = strings.TrimSpace(string(b)); cfg.NATSToken == "" {
					return fmt.Errorf("--nats-token-file: %s is empty", natsTokenFile)
				}
			}
			hurry, stop := secondSignal(cmd.Context())
			defer stop()
			cfg.Hurry = hurry
			setGCPercent()
			return server.Run(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&cfg.Dev, "dev", false, "development mode: embedded defaults and NO authentication")
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:8080", "HTTP listen address")
	f.StringVar(&cfg.DataDir, "data-dir", "steward-data", "directory for the SQLite database and the embedded NATS store")
	f.StringVar(&cfg.DatabaseURL, "database-url", "", "PostgreSQL URL (postgres://…); empty uses SQLite in --data-dir")
	f.StringVar(&cfg.NATSURL, "nats-url", "", "external NATS URL (nats://…); empty runs NATS embedded")
	f.StringVar(&cfg.APIToken, "api-token", "", "a static administrator bearer token; without it (and without --dev) the server\n"+
		"starts only if its database holds an admin token (steward token create --role admin)")
	logs.register(f)
	f.BoolVar(&logRequests, "log-requests", false, "with --dev, log each request at info as outside it (--dev logs them at debug)")
	f.StringVar(&cfg.TraceExporter, "trace-exporter", "", `OpenTelemetry span exporter: "stdout", or empty for none`)
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 0, "how long a graceful stop may take after the drain delay (default 20s)")
	f.DurationVar(&cfg.DrainDelay, "drain-delay", 5*time.Second, "how long to serve on after SIGTERM with /readyz answering 503, for load balancers to notice (0 with --dev unless set)")
	f.StringVar(&migrate, "migrate", "auto", "auto: apply pending schema migrations at start; check: refuse to start when any is pending (run `steward migrate` first)")
	f.BoolVar(&cfg.ProcessProvider, "process-provider", false, "run the reference process provider in-process (default on with --dev on SQLite;\n"+
		"outside --dev only with --process-provider-noop; with --database-url only as --process-provider-noop:\n"+
		"run `steward provider process` beside the replicas)")
	f.BoolVar(&cfg.ProcessProviderNoOp, "process-provider-noop", false, "the in-process provider accepts orders without starting processes")
	f.BoolVar(&cfg.DevCatalog, "dev-catalog", false, "seed the dev catalog (default on with --dev; on with --process-provider)")
	f.StringSliceVar(&cfg.ProcessProviderAllowCommands, "process-provider-allow-command", nil,
		"a command the in-process provider runs (spec.process.command[0] as written; repeat it; \"*\": any; default: sleep, the dev catalog's)")
	f.DurationVar(&cfg.HealthInterval, "health-interval", 0, "time between health checks of a provider (default 10s)")
	f.DurationVar(&cfg.CleanupInterval, "cleanup-interval", 0, "time between passes of the cleanup worker (default 10s)")
	f.DurationVar(&cfg.RehydrationCopyTimeout, "rehydration-copy-timeout", 0, "how long a rehydration may copy its data before it is given up and the old instance takes writes again (default 1h)")
	f.IntVar(&cfg.CleanupMaxRetries, "cleanup-max-retries", 0, "failed attempts before a cleanup task is FAILED (default 10)")
	f.DurationVar(&cfg.ResyncAfter, "resync-after", 0, "read an instance back from its provider after this long in a transitional state without a status report, then again with backoff until it settles (default 30s; negative: off)")
	f.DurationVar(&cfg.ResyncSettledEvery, "resync-settled-every", 0, "read each settled (RUNNING or FAILED) instance back from its provider at least this often, spread over time (default 10m; negative: never)")
	f.DurationVar(&cfg.ProviderTimeout, "provider-timeout", 0, "timeout of each call to a provider (default 10s)")
	f.StringSliceVar(&allowCIDRs, "provider-allow-cidr", []string{"127.0.0.0/8", "::1/128"}, "private or loopback CIDR that provider endpoints may be in, checked\n"+
		"on every connection (repeatable; replaces the default; empty: none). Link-local and metadata addresses are never called")
	f.DurationVar(&cfg.TombstoneRetention, "tombstone-retention", 0, "how long a removed order stays readable before it is purged (default 720h)")
	f.DurationVar(&cfg.DeletionStuckAfter, "deletion-stuck-after", 0, "how long a deletion may wait at its gate before it counts as stuck (default 10m)")
	f.StringVar(&cfg.NATSListen, "nats-listen", "", "also accept NATS clients (adapters) on this address, e.g. 127.0.0.1:4222; beyond 127.0.0.1 only with --nats-token-file")
	f.IntVar(&cfg.NATSStreamReplicas, "nats-stream-replicas", 1, "how many servers of the --nats-url cluster keep Steward's stream and consumers (3 survives losing one)")
	f.StringVar(&natsTokenFile, "nats-token-file", "", "file holding the token every client of the embedded NATS server must give (nats://TOKEN@host:port)")
	f.DurationVar(&cfg.SentinelInterval, "sentinel-interval", 0, "time between the sentinel's decision cycles (default 5s; negative: no sentinel here)")
	f.DurationVar(&cfg.SentinelDebounce, "sentinel-debounce", 0, "time before a not-ready order gets another reconcile event (default 10s)")
	f.DurationVar(&cfg.SentinelMaxAge, "sentinel-max-age", 0, "time before any order gets another reconcile event (default 30m)")
	f.StringVar(&decision, "sentinel-decision", "", "YAML file with the sentinel's message_decision (params, result)")
	f.StringSliceVar(&trustedProxies, "trusted-proxy", nil, "a proxy (address or CIDR) whose X-Forwarded-For names the client;\n"+
		"repeat it, or separate by commas (default none: the peer is the client)")
	f.StringVar(&cfg.MetricsListen, "metrics-listen", "", "serve /metrics on this address only (e.g. 0.0.0.0:9090), and answer it 404 on --listen;\n"+
		"empty serves it on --listen")
	f.StringVar(&cfg.PprofListen, "pprof-listen", "", "serve Go's profiling endpoints on this address (no authentication; for measurements)")
	return cmd
}

// replicaProviderHint is what to run instead of an in-process provider on
// a shared database.
const replicaProviderHint = "run one provider beside the replicas and give it every replica's URL: " +
	"steward provider process --steward-url http://replica-1:8080,http://replica-2:8080"

// inProcessProvider settles the in-process provider and the dev catalog
// from --dev, --database-url and the flags given (issue 46, items 1 and
// 4). The in-process provider serves only the replica that runs it: on a
// shared database every replica would register it as process-sp, the last
// one winning, and a kill -9 of that one left every new order waiting for
// it to come back. So with --database-url it is off, and asking for it is
// refused, saying what to run instead; only its no-op form, which runs
// nothing and is for benchmarks, may still be asked for. The dev catalog is
// seeded with --dev whether the provider runs here or beside the server.
func inProcessProvider(cmd *cobra.Command, cfg *server.Config) error {
	given := func(flag string) bool { return cmd.Flags().Changed(flag) || envSet(flag) }
	shared := cfg.DatabaseURL != ""
	if shared && given("process-provider") && cfg.ProcessProvider && !cfg.ProcessProviderNoOp {
		return &ctl.UsageError{Msg: "--process-provider with --database-url: the in-process provider serves only the replica " +
			"that runs it, and replicas on one database would each register it as process-sp, the last one winning; " +
			replicaProviderHint}
	}
	if !given("process-provider") {
		cfg.ProcessProvider = cfg.Dev && (!shared || cfg.ProcessProviderNoOp)
	}
	if !given("dev-catalog") {
		cfg.DevCatalog = cfg.Dev
	}
	switch {
	case cfg.Dev && shared && !cfg.ProcessProvider:
		cfg.Logger.Warn("no in-process provider on a shared database (--database-url): the catalog's container items " +
			"need a provider: " + replicaProviderHint)
	case shared && cfg.ProcessProvider:
		cfg.Logger.Warn("the no-op in-process provider serves only this replica: for a benchmark of one; " +
			"several replicas need one provider beside them: " + replicaProviderHint)
	}
	return nil
}
