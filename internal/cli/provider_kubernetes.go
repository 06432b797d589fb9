package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/kubeprovider"
)

func newKubernetesProviderCmd(stderr io.Writer) *cobra.Command {
	var cfg kubeprovider.DaemonConfig
	var kubeconfig, kubeContext string
	var shared *providerFlags
	clusterKeys := []string{"name", "kubeconfig", "context", "listen", "label"}
	clusters := &backendsFlag{name: "cluster", backend: "cluster", keys: clusterKeys, singles: clusterKeys}
	cmd := &cobra.Command{
		Use:   "kubernetes",
		Short: "Run container-app orders as applications on a Kubernetes cluster",
		Long: `Realise orders of the built-in service type container-app on a Kubernetes
cluster: each order gets a namespace of its own (steward-<instance id>,
labelled with the order and instance ids) holding a Deployment of its image,
a ClusterIP Service for its service ports when exposed, a ResourceQuota and
LimitRange from its resources, and a NetworkPolicy admitting only its own
namespace. Everything is written with server-side apply under one field
manager (steward-kubernetes-provider), so a replayed create changes nothing.

The provider watches its apps through informers (one watch per kind, no
polling) and reports RUNNING once a rollout has every replica ready, FAILED
when a rollout cannot finish (ProgressDeadlineExceeded, an image that cannot
be pulled, a crash loop), the runtime's health (degraded when some replicas
are not ready), the outputs (service host, cluster IP, ports) and drift: a
managed field changed out of band (kubectl scale, an edited env) makes the
order show Synced=False naming it; with --drift=enforce it is put back.
Updates are applied in place and the rollout followed; a restart repair is a
rollout restart, a reconcile applies the spec again. A delete removes the
namespace with foreground propagation.

The cluster comes from --kubeconfig (and --context). One process may serve
several clusters: give each as --cluster
name=N,kubeconfig=F[,context=C][,listen=ADDR][,label=k=v…] instead of
--name, --kubeconfig, --context, --listen and --label; each registers as a
provider of its own, so policies place orders on one or another (by name or
by label, such as region=eu).

Steward's URL comes from --steward-url or STEWARD_SERVER, and its bearer
token from --token-file or --token, else STEWARD_TOKEN_FILE or STEWARD_TOKEN
(none for a --dev server).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if cfg.Logger, err = shared.logs.logger(stderr); err != nil {
				return err
			}
			if cfg.Provider.Drift != kubeprovider.DriftReport && cfg.Provider.Drift != kubeprovider.DriftEnforce {
				return fmt.Errorf("--drift is report or enforce, not %q", cfg.Provider.Drift)
			}
			if err := shared.resolveToken(); err != nil {
				return err
			}
			return serveBackends(cmd, shared, clusters, &cfg, func() (err error) {
				cfg.Provider.REST, err = kubeprovider.RESTConfig(kubeconfig, kubeContext)
				return err
			}, parseCluster, kubeprovider.NewDaemon)
		},
	}
	shared = newProviderFlags(cmd, &cfg.Settings, kubeprovider.Name, "127.0.0.1:9103")
	shared.registerLabels(cmd)
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig file of the cluster to serve")
	f.StringVar(&kubeContext, "context", "", "the kubeconfig's context to use (default: its current context)")
	clusters.register(cmd,
		"a cluster to serve, name=N,kubeconfig=F[,context=C][,listen=ADDR][,label=k=v]; repeatable, instead of --name, --kubeconfig, --context, --listen, --label")
	f.StringVar(&cfg.Provider.Drift, "drift", kubeprovider.DriftReport,
		"what the provider does with a managed field changed out of band: report (the order shows Synced=False) or enforce (apply the spec again, and say so)")
	f.StringVar(&cfg.Provider.MaxCPU, "max-cpu", "", "the most CPU one container may request or be limited to (e.g. 2); orders above it are refused; empty: no bound")
	f.StringVar(&cfg.Provider.MaxMemory, "max-memory", "", "the most memory one container may request or be limited to (e.g. 4Gi); empty: no bound")
	f.StringVar(&cfg.Provider.ClusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain, in the service host of the outputs")
	f.Float32Var(&cfg.Provider.QPS, "kube-qps", 100, "requests per second to the API server at most (twice as many in a burst)")
	f.DurationVar(&cfg.Provider.RepairTimeout, "repair-timeout", 0, "how long a repair waits for the app to run again (default 2m)")
	return cmd
}

// parseCluster reads one --cluster: name=N,kubeconfig=F[,context=C]
// [,listen=ADDR][,label=k=v…]; base gives what the clusters share.
func parseCluster(clusters *backendsFlag, spec string, base kubeprovider.DaemonConfig) (kubeprovider.DaemonConfig, error) {
	d := base
	var kubeconfig, kubeContext string
	var err error
	d.Settings, err = clusters.parse(spec, spec, base.Settings, func(key, value string) {
		switch key {
		case "kubeconfig":
			kubeconfig = value
		case "context":
			kubeContext = value
		}
	})
	if err != nil {
		return d, err
	}
	if d.Name == "" || kubeconfig == "" {
		return d, fmt.Errorf("--cluster %q: name= and kubeconfig= are required", spec)
	}
	d.Provider.REST, err = kubeprovider.RESTConfig(kubeconfig, kubeContext)
	return d, err
}
