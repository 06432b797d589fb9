package server_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stewardhq/steward/internal/adapter"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

var configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// exampleAdapter is the repository's example adapter config, for the
// service type given.
func exampleAdapter(t *testing.T, serviceType string) *adapter.Config {
	t.Helper()
	cfg, err := adapter.Load(filepath.Join("..", "..", "examples", "adapters", "cluster-namespace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServiceTypes = []string{serviceType}
	return cfg
}

// The whole flow on a real Kubernetes API server: an order of a type that
// requires the example adapter is up but not Ready until the adapter,
// driven by the sentinel's events over JetStream, has created its
// namespace and reported; DELETE sends the adapter into deletion mode,
// which deletes in `after` order over several reconciles (the namespace,
// Foreground, last), reports Applied=False/Health=True, and the order is
// removed; the retained record stays.
func TestAdapter_ReconcilesAnOrderInKubernetesAndCleansUpOnDelete(t *testing.T) {
	t.Parallel()
	cluster := kubetest.Start(t)
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		orderID := "k8s-" + string(engine)
		s := apitest.Start(t, engine, apitest.Fast, func(c *server.Config) {
			c.SentinelInterval, c.SentinelDebounce = 50*time.Millisecond, 300*time.Millisecond
		})
		p := providertest.New(t)
		s.Do(t, "POST", "/api/v1/service-types?id=kcluster", map[string]any{
			"lifecycle": "simple", "required_adapters": []string{"cluster-namespace"},
			"schema": map[string]any{"type": "object", "properties": map[string]any{"nodes": map[string]any{"type": "integer"}}},
		}).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/providers", p.Registration("kcluster-sp", "kcluster")).Want(t, http.StatusCreated)
		s.Do(t, "POST", "/api/v1/catalog-items?id=kcluster", map[string]any{"service_type": "kcluster", "defaults": map[string]any{"nodes": 3}}).
			Want(t, http.StatusCreated)

		type order struct {
			State      string
			InstanceID string `json:"instance_id"`
			Conditions []struct{ Type, Status, Reason, Message string }
		}
		get := func() (order, int) {
			var o order
			r := s.Do(t, "GET", "/api/v1/catalog-item-instances/"+orderID, nil)
			if r.Status == http.StatusOK {
				r.JSON(t, &o)
			}
			return o, r.Status
		}
		ready := func(o order) (string, string) {
			for _, c := range o.Conditions {
				if c.Type == "Ready" {
					return c.Status, c.Reason
				}
			}
			return "", ""
		}

		s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+orderID, map[string]any{"catalog_item_id": "kcluster"}).
			Want(t, http.StatusCreated)
		var o order
		poll(t, "the provider got the order", func() bool { o, _ = get(); return o.InstanceID != "" })
		p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
		s.ReportStatus(t, o.InstanceID, "RUNNING")
		poll(t, "the order is up", func() bool { o, _ = get(); return o.State == "up" })
		if st, reason := ready(o); st != "False" || reason != "AdaptersNotReady" {
			t.Fatalf("before any adapter runs: Ready %s/%s, want False/AdaptersNotReady", st, reason)
		}

		// The adapter starts only now: the events the sentinel published
		// meanwhile wait for it in its durable consumer.
		nsPrefix := "e2e-" + string(engine)
		transport, err := adapter.NewKubernetesTransport(cluster.RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		exec, err := adapter.NewExecutor(exampleAdapter(t, "kcluster"), adapter.Deps{
			Transport: transport, API: &adapter.HTTPAPI{BaseURL: s.URL()},
			Env: func(k string) (string, bool) {
				if k == "NS_PREFIX" {
					return nsPrefix, true
				}
				return os.LookupEnv(k)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		consumer, err := adapter.NewConsumer(adapter.ConsumerConfig{Executor: exec, Bus: s.Bus(),
			Backoff: func(uint64) time.Duration { return 100 * time.Millisecond }})
		if err != nil {
			t.Fatal(err)
		}
		if err := consumer.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(consumer.Stop)

		poll(t, "the order is Ready", func() bool { o, _ = get(); st, _ := ready(o); return st == "True" })
		dyn := cluster.Dynamic()
		ns := nsPrefix + "-" + strings.ToLower(orderID)
		ctx := context.Background()
		if _, err := dyn.Resource(kubetest.NamespaceGVR).Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Fatalf("the adapter's namespace %s: %v", ns, err)
		}
		if _, err := dyn.Resource(configMapGVR).Namespace(ns).Get(ctx, "order-values", metav1.GetOptions{}); err != nil {
			t.Fatalf("the adapter's configmap: %v", err)
		}

		s.Do(t, "DELETE", "/api/v1/catalog-item-instances/"+orderID, nil).Want(t, http.StatusAccepted)
		poll(t, "the order is removed once the adapter confirmed its cleanup", func() bool {
			o, _ = get()
			return o.State == "terminated"
		})
		var list struct{ Results []order }
		s.Do(t, "GET", "/api/v1/catalog-item-instances?service_type=kcluster", nil).Want(t, http.StatusOK).JSON(t, &list)
		if len(list.Results) != 0 {
			t.Errorf("the removed order is still listed: %+v", list.Results)
		}
		poll(t, "the namespace is gone", func() bool {
			_, err := dyn.Resource(kubetest.NamespaceGVR).Get(ctx, ns, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
		if _, err := dyn.Resource(configMapGVR).Namespace("default").Get(ctx, "steward-order-"+strings.ToLower(orderID), metav1.GetOptions{}); err != nil {
			t.Errorf("the retained record: %v", err)
		}
		_ = dyn.Resource(configMapGVR).Namespace("default").Delete(ctx, "steward-order-"+strings.ToLower(orderID), metav1.DeleteOptions{})
	})
}
