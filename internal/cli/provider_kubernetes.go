package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/kubeprovider"
)

func newKubernetesProviderCmd(stderr io.Writer) *cobra.Command {
	var cfg kubeprovider.DaemonConfig
	var kubeconfig, kubeContext string
	var logs logFlags
	var labels, clusters []string
	var token machineToken
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := logs.logger(stderr)
			if err != nil {
				return err
			}
			cfg.Logger = logger
			if cfg.Provider.Drift != kubeprovider.DriftReport && cfg.Provider.Drift != kubeprovider.DriftEnforce {
				return fmt.Errorf("--drift is report or enforce, not %q", cfg.Provider.Drift)
			}
			if cfg.Token, err = token.resolve(); err != nil {
				return err
			}
			var daemons []kubeprovider.DaemonConfig
			if len(clusters) == 0 {
				if cfg.Provider.REST, err = kubeprovider.RESTConfig(kubeconfig, kubeContext); err != nil {
					return err
				}
				if cfg.Labels, err = parseLabels(labels); err != nil {
					return err
				}
				daemons = append(daemons, cfg)
			} else {
				f := cmd.Flags()
				for _, single := range []string{"name", "kubeconfig", "context", "listen", "label"} {
					if f.Changed(single) {
						return fmt.Errorf("--%s and --cluster both name a cluster: give each cluster as a --cluster", single)
					}
				}
				for _, c := range clusters {
					d, err := parseCluster(c, cfg)
					if err != nil {
						return err
					}
					daemons = append(daemons, d)
				}
			}
			names, started := make([]string, len(daemons)), make([]daemon, len(daemons))
			for i, dc := range daemons {
				names[i], started[i] = dc.Name, kubeprovider.NewDaemon(dc)
			}
			return runDaemons(cmd.Context(), names, started)
		},
	}
	f := cmd.Flags()
	registerStewardURLs(cmd, "steward-url", &cfg.StewardURLs)
	f.StringVar(&cfg.Name, "name", kubeprovider.Name, "name to register under")
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:9103", "address of the provider API")
	f.StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig file of the cluster to serve")
	f.StringVar(&kubeContext, "context", "", "the kubeconfig's context to use (default: its current context)")
	f.StringArrayVar(&labels, "label", nil, "metadata to register, key=value; repeatable")
	f.StringArrayVar(&clusters, "cluster", nil,
		"a cluster to serve, name=N,kubeconfig=F[,context=C][,listen=ADDR][,label=k=v]; repeatable, instead of --name, --kubeconfig, --context, --listen, --label")
	f.StringVar(&cfg.Provider.Drift, "drift", kubeprovider.DriftReport,
		"what the provider does with a managed field changed out of band: report (the order shows Synced=False) or enforce (apply the spec again, and say so)")
	f.StringVar(&cfg.Provider.MaxCPU, "max-cpu", "", "the most CPU one container may request or be limited to (e.g. 2); orders above it are refused; empty: no bound")
	f.StringVar(&cfg.Provider.MaxMemory, "max-memory", "", "the most memory one container may request or be limited to (e.g. 4Gi); empty: no bound")
	f.StringVar(&cfg.Provider.ClusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain, in the service host of the outputs")
	f.Float32Var(&cfg.Provider.QPS, "kube-qps", 100, "requests per second to the API server at most (twice as many in a burst)")
	f.DurationVar(&cfg.Provider.RepairTimeout, "repair-timeout", 0, "how long a repair waits for the app to run again (default 2m)")
	logs.register(f)
	token.register(cmd, "bearer token for Steward, empty for a --dev server")
	return cmd
}

// parseCluster reads one --cluster: name=N,kubeconfig=F[,context=C]
// [,listen=ADDR][,label=k=v…]; base gives what the clusters share.
func parseCluster(spec string, base kubeprovider.DaemonConfig) (kubeprovider.DaemonConfig, error) {
	d := base
	d.Name, d.Listen, d.Labels = "", "127.0.0.1:0", map[string]string{}
	var kubeconfig, kubeContext string
	for part := range strings.SplitSeq(spec, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || v == "" {
			return d, fmt.Errorf("--cluster %q: %q is not key=value", spec, part)
		}
		switch k {
		case "name":
			d.Name = v
		case "kubeconfig":
			kubeconfig = v
		case "context":
			kubeContext = v
		case "listen":
			d.Listen = v
		case "label":
			lk, lv, ok := strings.Cut(v, "=")
			if !ok || lk == "" {
				return d, fmt.Errorf("--cluster %q: label %q: want label=key=value", spec, v)
			}
			d.Labels[lk] = lv
		default:
			return d, fmt.Errorf("--cluster %q: unknown key %q (name, kubeconfig, context, listen, label)", spec, k)
		}
	}
	if d.Name == "" || kubeconfig == "" {
		return d, fmt.Errorf("--cluster %q: name= and kubeconfig= are required", spec)
	}
	var err error
	d.Provider.REST, err = kubeprovider.RESTConfig(kubeconfig, kubeContext)
	return d, err
}
