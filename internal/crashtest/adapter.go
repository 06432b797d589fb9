package crashtest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A cluster trial with Config.Kubeconfig also orders an adapted type: one
// whose required adapter, `steward adapter` run as a process of its own,
// gives each order a namespace in that Kubernetes cluster from the
// sentinel's reconcile events, and reports on it. Such an order is ready
// only once the adapter reported its current generation, and removed only
// once the adapter confirmed its cleanup: so the sentinel's events and the
// adapter's reports must all arrive through the kills.
const (
	adaptedType    = "crash-adapted"
	adaptedItem    = "crash-adapted"
	adapterName    = "cluster-namespace"
	adaptedOneIn   = 16 // one create in adaptedOneIn orders the adapted item
	adapterExample = "service_types: [namespaced-process]"
)

// setUpAdapted creates the adapted service type, before the provider
// registers for it.
func (t *trial) setUpAdapted(ctx context.Context) error {
	return t.api.send(ctx, http.MethodPost, "/api/v1/service-types?id="+adaptedType, map[string]any{
		"lifecycle": "simple", "required_adapters": []string{adapterName}, "schema": map[string]any{"type": "object"},
	}, nil)
}

// startAdapter writes the adapter's config (Config.AdapterConfig, serving
// the adapted type) and starts `steward adapter` on every replica's URL and
// the NATS cluster; it is stopped at the end of the trial.
func (t *trial) startAdapter(rep *Report) (*serverProc, error) {
	example, err := os.ReadFile(t.cfg.AdapterConfig)
	if err != nil {
		return nil, fmt.Errorf("crashtest: adapter config: %w", err)
	}
	cfg := strings.Replace(string(example), adapterExample, "service_types: ["+adaptedType+"]", 1)
	if cfg == string(example) {
		return nil, fmt.Errorf("crashtest: %s no longer says %q", t.cfg.AdapterConfig, adapterExample)
	}
	path := filepath.Join(t.cfg.Dir, "adapter.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, fmt.Errorf("crashtest: %w", err)
	}
	args := []string{"adapter", "--config", path, "--nats-url", t.nats.url(), "--kubeconfig", t.cfg.Kubeconfig,
		"--log-level", "info"}
	for _, s := range t.srvs {
		args = append(args, "--server", s.base)
	}
	rep.AdapterLog = filepath.Join(t.cfg.Dir, "adapter.log")
	p := newProc(t.cfg.Binary, args, rep.AdapterLog, "")
	// Namespaces of the trial's own: several trials may share a cluster.
	p.env = append(p.env, "NS_PREFIX="+t.tag)
	if err := p.start(); err != nil {
		return nil, err
	}
	return p, nil
}

// adapterStatusView is an adapter's report on an order.
type adapterStatusView struct {
	Adapter            string `json:"adapter"`
	ObservedGeneration int64  `json:"observed_generation"`
	Conditions         []struct {
		Type   string `json:"type"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"conditions"`
}

// adapterStatuses reads the adapter's report on every live adapted order.
func (t *trial) adapterStatuses(ctx context.Context, orders []orderView) (map[string]adapterStatusView, error) {
	out := map[string]adapterStatusView{}
	for _, o := range orders {
		if o.DeletedAt != nil || o.ServiceType != adaptedType {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		sts, err := list[adapterStatusView](ctx, t.api, "/api/v1/catalog-item-instances/"+url.PathEscape(o.ID)+"/adapter-statuses", nil)
		cancel()
		if err != nil {
			return nil, err
		}
		for _, s := range sts {
			if s.Adapter == adapterName {
				out[o.ID] = s
			}
		}
	}
	return out, nil
}
