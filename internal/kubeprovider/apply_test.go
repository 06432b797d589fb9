package kubeprovider_test

import (
	"context"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stewardhq/steward/internal/kubeprovider"
	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/poll"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kubetest.StopShared()
	os.Exit(code)
}

// rolloutWait bounds a wait for pods to roll out on a test cluster: the
// scheduler, kwok and the quota controller all take their turn, and under
// CI's parallel -race packages on two cores an order once took over the
// 30 s of poll.Until to be up on a cluster just started.
const rolloutWait = 2 * time.Minute

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// Issue 26: an order's objects, applied to a cluster with pods: its own
// namespace with the order's labels, a Deployment that rolls out on the
// simulated nodes, a Service for its service ports, a ResourceQuota and a
// LimitRange from its resources, and a NetworkPolicy admitting only its
// namespace; applying them again (a replayed create) changes nothing;
// deleting removes the namespace.
func TestApplier_AnOrdersObjectsRollOutAndReapplyingChangesNothing(t *testing.T) {
	t.Parallel()
	c := kubetest.StartWithPods(t)
	two := int32(2)
	order := kubeprovider.Order{OrderID: "web", InstanceID: "0a1b2c3d-0000-4000-8000-000000000001", Spec: kubeprovider.AppSpec{
		Image: "nginx:1.27", Replicas: &two, Args: []string{"-g", "daemon off;"},
		Env:   []kubeprovider.EnvVar{{Name: "MODE", Value: "prod"}},
		Ports: []kubeprovider.Port{{ContainerPort: 8080, ServicePort: 80}, {ContainerPort: 9090}},
		Resources: &kubeprovider.Resources{Requests: kubeprovider.Quantities{CPU: "100m", Memory: "64Mi"},
			Limits: kubeprovider.Quantities{CPU: "500m", Memory: "256Mi"}},
		Expose: "cluster",
	}}
	if err := order.Spec.Validate(); err != nil {
		t.Fatal(err)
	}
	objs, err := kubeprovider.Manifests(order)
	if err != nil {
		t.Fatal(err)
	}
	ns := kubeprovider.Namespace(order.InstanceID)
	t.Cleanup(func() {
		_ = c.Dynamic().Resource(kubetest.NamespaceGVR).Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	applier := kubeprovider.Applier{Dynamic: c.Dynamic()}
	first, err := applier.Apply(t.Context(), objs)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]*unstructured.Unstructured{}
	for _, o := range first {
		kinds[o.GetKind()] = o
		if o.GetLabels()[kubeprovider.LabelOrder] != "web" || o.GetLabels()[kubeprovider.LabelInstance] != order.InstanceID {
			t.Errorf("%s %s has labels %v, want the order's and the instance's", o.GetKind(), o.GetName(), o.GetLabels())
		}
		if o.GetKind() != "Namespace" && o.GetNamespace() != ns {
			t.Errorf("%s %s is in namespace %q, want %s", o.GetKind(), o.GetName(), o.GetNamespace(), ns)
		}
	}
	for _, kind := range []string{"Namespace", "Deployment", "Service", "ResourceQuota", "LimitRange", "NetworkPolicy"} {
		if kinds[kind] == nil {
			t.Errorf("no %s was applied", kind)
		}
	}
	if svc := kinds["Service"]; svc != nil {
		ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
		ip, _, _ := unstructured.NestedString(svc.Object, "spec", "clusterIP")
		if len(ports) != 1 || ports[0].(map[string]any)["port"] != int64(80) || ports[0].(map[string]any)["targetPort"] != int64(8080) || ip == "" {
			t.Errorf("service ports %v, cluster IP %q; want 80 to 8080 only, and an IP", ports, ip)
		}
	}
	if q := kinds["ResourceQuota"]; q != nil {
		// Two replicas and one of surge.
		if cpu, _, _ := unstructured.NestedString(q.Object, "spec", "hard", "limits.cpu"); cpu != "1500m" {
			t.Errorf("quota limits.cpu = %q, want 1500m", cpu)
		}
	}

	poll.UntilWithin(t, rolloutWait, "the app's deployment has 2 available replicas", func() bool {
		d, err := c.Dynamic().Resource(deployments).Namespace(ns).Get(t.Context(), "app", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n, _, _ := unstructured.NestedInt64(d.Object, "status", "availableReplicas")
		return n == 2
	})

	again, err := applier.Apply(t.Context(), objs)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range again {
		cur, err := c.Dynamic().Resource(gvrOf(o)).Namespace(o.GetNamespace()).Get(t.Context(), o.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if o.GetGeneration() != first[i].GetGeneration() || cur.GetGeneration() != first[i].GetGeneration() {
			t.Errorf("%s %s: generation %d after the second apply, was %d", o.GetKind(), o.GetName(), cur.GetGeneration(), first[i].GetGeneration())
		}
	}

	// Delete: the namespace goes, with everything in it; asking again is
	// no error.
	if gone, err := applier.Gone(t.Context(), order.InstanceID); err != nil || gone {
		t.Fatalf("Gone before the delete = %v, %v", gone, err)
	}
	if err := applier.Delete(t.Context(), order.InstanceID); err != nil {
		t.Fatal(err)
	}
	// The namespace controller deletes the pods, kwok confirms them, then
	// the namespace goes: about 10 s on an idle machine.
	poll.UntilWithin(t, 2*time.Minute, "the app's namespace is gone", func() bool {
		gone, err := applier.Gone(t.Context(), order.InstanceID)
		if err != nil {
			t.Fatal(err)
		}
		return gone
	})
	if err := applier.Delete(t.Context(), order.InstanceID); err != nil {
		t.Errorf("a second delete: %v", err)
	}
}

func gvrOf(o *unstructured.Unstructured) schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(o.GetAPIVersion())
	resource := map[string]string{"Namespace": "namespaces", "Deployment": "deployments", "Service": "services",
		"ResourceQuota": "resourcequotas", "LimitRange": "limitranges", "NetworkPolicy": "networkpolicies"}[o.GetKind()]
	return gv.WithResource(resource)
}
