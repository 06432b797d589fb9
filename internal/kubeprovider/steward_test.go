package kubeprovider_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/kubeprovider"
	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/providerhost"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// stewardOrder is what the tests read of an order.
type stewardOrder struct {
	State, Status string
	InstanceID    string `json:"instance_id"`
	LastError     string `json:"last_error"`
	Version       int64
	Outputs       map[string]any
	Conditions    []struct{ Type, Status, Reason, Message string }
}

func (o stewardOrder) condition(kind string) (status, message string) {
	for _, c := range o.Conditions {
		if c.Type == kind {
			return c.Status, c.Message
		}
	}
	return "", ""
}

// startKubeProvider starts a kubernetes provider daemon on the cluster
// for Steward s and waits until it has registered.
func startKubeProvider(t testing.TB, s *apitest.Server, c *kubetest.Cluster, cfg kubeprovider.DaemonConfig) *kubeprovider.Daemon {
	t.Helper()
	cfg.StewardURLs = []string{s.URL()}
	cfg.Provider.REST = c.RESTConfig()
	d := kubeprovider.NewDaemon(cfg)
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	poll.Until(t, "the kubernetes provider registers", func() bool {
		select {
		case <-d.Registered():
			return true
		default:
			return false
		}
	})
	return d
}

// Issue 26, through Steward's API: the dev catalog's web-app on a cluster
// with simulated nodes. Bad input is a 400 from the schema, resources above
// the provider's bounds are refused by its check; an order becomes its own
// namespace with the order's labels, a Deployment, a Service, a quota, a
// limit range and a network policy, and is up with its outputs once the
// pods run; an image update rolls out and is up again; an image that
// cannot be pulled fails the update, and the rollback runs the old one;
// kubectl scale by hand shows Synced=False; a restart is a new ReplicaSet;
// a delete removes the namespace.
func TestSteward_OrderWebAppUntilDeleted(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := kubetest.StartWithPods(t)
		kube, err := kubernetes.NewForConfig(c.RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		s := apitest.Start(t, engine, func(c *server.Config) { c.ProcessProvider = true }) // seeds the dev catalog
		startKubeProvider(t, s, c, kubeprovider.DaemonConfig{Settings: providerhost.Settings{Name: "kube-" + string(engine)},
			Provider: kubeprovider.Config{MaxCPU: "1", MaxMemory: "1Gi"}})
		order := func(id string, values map[string]any) *apitest.Response {
			var uv []map[string]any
			for path, v := range values {
				uv = append(uv, map[string]any{"path": path, "value": v})
			}
			return s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{"catalog_item_id": "web-app", "user_values": uv})
		}
		get := func(id string) stewardOrder {
			var o stewardOrder
			s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id+"?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &o)
			return o
		}
		waitState := func(id, state string) stewardOrder {
			var o stewardOrder
			poll.UntilWithin(t, rolloutWait, "order "+id+" is "+state, func() bool { o = get(id); return o.State == state })
			return o
		}

		// Bad input, refused by the schema before anything is placed.
		for name, values := range map[string]map[string]any{
			"image with a space":      {"image": "nginx 1.27"},
			"uppercase image":         {"image": "Nginx:1.27"},
			"port out of range":       {"ports": []any{map[string]any{"container_port": 70000}}},
			"env name with =":         {"env": []any{map[string]any{"name": "A=B", "value": "x"}}},
			"51 replicas":             {"replicas": 51},
			"negative replica count":  {"replicas": -1},
			"service port of 0":       {"ports": []any{map[string]any{"container_port": 80, "service_port": 0}}},
			"protocol that is not IP": {"ports": []any{map[string]any{"container_port": 80, "protocol": "HTTP"}}},
		} {
			r := order("bad", values)
			if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "INVALID_ARGUMENT") ||
				strings.Contains(string(r.Body), "not an editable field") {
				t.Errorf("%s: %d %s, want 400 INVALID_ARGUMENT from the schema", name, r.Status, r.Body)
			}
		}
		// Above what the provider allows: its check refuses it, naming why.
		r := order("big", map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "4", "memory": "256Mi"}}})
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "RESOURCES_ABOVE_LIMIT") ||
			!strings.Contains(string(r.Body), "resources.limits.cpu") {
			t.Errorf("resources above the bounds: %d %s, want 400 naming RESOURCES_ABOVE_LIMIT and resources.limits.cpu", r.Status, r.Body)
		}

		order("web", map[string]any{"env": []any{map[string]any{"name": "MODE", "value": "prod"}}}).Want(t, http.StatusCreated)
		up := waitState("web", "up")
		ns := kubeprovider.Namespace(up.InstanceID)
		t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
		if up.Outputs["service_host"] != "app."+ns+".svc.cluster.local" || up.Outputs["ports"] != "80/TCP" ||
			up.Outputs["cluster_ip"] == nil || up.Outputs["ready_replicas"] != 2.0 {
			t.Errorf("outputs %v; want the service's host, cluster IP, port 80/TCP and 2 ready replicas", up.Outputs)
		}
		checkObjects(t, kube, ns, up.InstanceID)

		// An image update rolls out in place.
		s.Do(t, "PATCH", "/api/v1/catalog-item-instances/web",
			map[string]any{"edits": []map[string]any{{"path": "image", "value": "nginx:1.28"}}}).Want(t, http.StatusOK)
		poll.UntilWithin(t, rolloutWait, "the update is up with the new image", func() bool {
			o := get("web")
			d, err := kube.AppsV1().Deployments(ns).Get(t.Context(), "app", metav1.GetOptions{})
			return o.State == "up" && err == nil && d.Spec.Template.Spec.Containers[0].Image == "nginx:1.28" &&
				d.Status.UpdatedReplicas == 2 && d.Status.AvailableReplicas == 2
		})
		if id := get("web").InstanceID; id != up.InstanceID {
			t.Errorf("the update replaced the instance (%s, was %s); want it updated in place", id, up.InstanceID)
		}

		// An image that cannot be pulled: the update fails; the rollback
		// applies the previous image, and the app is up again.
		s.Do(t, "PATCH", "/api/v1/catalog-item-instances/web",
			map[string]any{"edits": []map[string]any{{"path": "image", "value": "unpullable.invalid/web:3"}}}).Want(t, http.StatusOK)
		failed := waitState("web", "update_failed")
		if !strings.Contains(failed.LastError, "ErrImagePull") {
			t.Errorf("update_failed last_error %q does not say ErrImagePull", failed.LastError)
		}
		s.Do(t, "POST", "/api/v1/catalog-item-instances/web:setState",
			map[string]any{"target_state": "rollback", "current_version": failed.Version}).Want(t, http.StatusOK)
		waitState("web", "up")
		d, err := kube.AppsV1().Deployments(ns).Get(t.Context(), "app", metav1.GetOptions{})
		if err != nil || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" {
			t.Errorf("after the rollback the deployment runs %v (%v), want nginx:1.28", d.Spec.Template.Spec.Containers, err)
		}

		// kubectl scale, by hand: the order says Synced=False, naming it.
		scale(t, kube, ns, 4)
		poll.Until(t, "the order is Synced=False naming the replicas", func() bool {
			st, msg := get("web").condition("Synced")
			return st == "False" && strings.Contains(msg, "replicas: want 2, found 4")
		})

		// A restart: a rollout restart, one ReplicaSet more; it re-applies
		// the spec, so the scale by hand is undone.
		before := len(replicaSets(t, kube, ns))
		var op struct{ ID, Status string }
		s.Do(t, "POST", "/api/v1/projects/default/app-instances/web/restart", nil).Want(t, http.StatusAccepted).JSON(t, &op)
		poll.Until(t, "the restart finishes", func() bool {
			s.Do(t, "GET", "/api/v1/projects/default/app-instances/web/repair-operations/"+op.ID, nil).Want(t, http.StatusOK).JSON(t, &op)
			return op.Status == "succeeded" || op.Status == "failed"
		})
		if op.Status != "succeeded" {
			t.Errorf("restart %s", op.Status)
		}
		if after := len(replicaSets(t, kube, ns)); after != before+1 {
			t.Errorf("%d ReplicaSets after the restart, want %d", after, before+1)
		}
		poll.Until(t, "the order is Synced=True again", func() bool { st, _ := get("web").condition("Synced"); return st == "True" })

		// Delete: the namespace goes, and the order with it.
		s.Do(t, "DELETE", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusAccepted)
		waitState("web", "terminated")
		if _, err := kube.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err == nil {
			t.Errorf("namespace %s is still there once the order is terminated", ns)
		}
	})
}

// checkObjects checks an app's objects as the cluster holds them.
func checkObjects(t *testing.T, kube kubernetes.Interface, ns, instanceID string) {
	t.Helper()
	ctx := t.Context()
	n, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels[kubeprovider.LabelInstance] != instanceID || n.Labels[kubeprovider.LabelOrder] == "" {
		t.Errorf("namespace labels %v, want the order and instance ids", n.Labels)
	}
	d, err := kube.AppsV1().Deployments(ns).Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctr := d.Spec.Template.Spec.Containers[0]
	if ctr.Image != "nginx:1.27" || *d.Spec.Replicas != 2 || len(ctr.Env) != 1 || ctr.Env[0].Name != "MODE" {
		t.Errorf("deployment: image %s, replicas %d, env %v; want nginx:1.27, 2, MODE", ctr.Image, *d.Spec.Replicas, ctr.Env)
	}
	svc, err := kube.CoreV1().Services(ns).Get(ctx, "app", metav1.GetOptions{})
	if err != nil || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 {
		t.Errorf("service: %v, %v; want port 80", svc, err)
	}
	q, err := kube.CoreV1().ResourceQuotas(ns).Get(ctx, "app-resources", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 500m for each of 2 replicas and one surge pod.
	if cpu := q.Spec.Hard["limits.cpu"]; cpu.MilliValue() != 1500 {
		t.Errorf("quota limits.cpu = %s, want 1500m", cpu.String())
	}
	if _, err := kube.CoreV1().LimitRanges(ns).Get(ctx, "app-resources", metav1.GetOptions{}); err != nil {
		t.Errorf("limit range: %v", err)
	}
	np, err := kube.NetworkingV1().NetworkPolicies(ns).Get(ctx, "same-namespace-only", metav1.GetOptions{})
	if err != nil || len(np.Spec.Ingress) != 1 {
		t.Errorf("network policy: %v, %v", np, err)
	}
	for kind, labels := range map[string]map[string]string{"deployment": d.Labels, "service": svc.Labels, "quota": q.Labels,
		"network policy": np.Labels} {
		if labels[kubeprovider.LabelInstance] != instanceID {
			t.Errorf("%s labels %v, want instance %s", kind, labels, instanceID)
		}
	}
	if !slices.ContainsFunc(d.ManagedFields, func(m metav1.ManagedFieldsEntry) bool {
		return m.Manager == kubeprovider.FieldManager && m.Operation == metav1.ManagedFieldsOperationApply
	}) {
		t.Errorf("the deployment was not applied by %s: %v", kubeprovider.FieldManager, d.ManagedFields)
	}
}
