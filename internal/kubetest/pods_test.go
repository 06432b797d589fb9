package kubetest_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/poll"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	pods        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// Issue 26: on the cluster with pods, a Deployment's replicas are made by
// the controllers, scheduled onto the simulated nodes by kube-scheduler and
// reported running by kwok, and the Deployment becomes Available.
func TestStartWithPods_DeploymentRollsOutOnSimulatedNodes(t *testing.T) {
	t.Parallel()
	c := kubetest.StartWithPods(t)
	createDeployment(t, c, "web", "nginx:1.27")
	poll.Until(t, "deployment web has 2 available replicas", func() bool {
		got, err := c.Dynamic().Resource(deployments).Namespace(c.Namespace).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n, _, _ := unstructured.NestedInt64(got.Object, "status", "availableReplicas")
		return n == 2
	})
	running := 0
	for _, p := range listPods(t, c, "web") {
		phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
		node, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName")
		if phase == "Running" && strings.HasPrefix(node, "kwok-node-") {
			running++
		}
	}
	if running != 2 {
		t.Errorf("%d pods run on a simulated node, want 2", running)
	}
}

// The simulated kubelet cannot pull an image under unpullable.invalid/:
// the pods are scheduled but stay Pending, their container waiting with
// ErrImagePull, and none becomes ready.
func TestStartWithPods_UnpullableImageWaits(t *testing.T) {
	t.Parallel()
	c := kubetest.StartWithPods(t)
	createDeployment(t, c, "broken", "unpullable.invalid/app:1")
	poll.Until(t, "both pods wait with ErrImagePull", func() bool {
		waiting := 0
		for _, p := range listPods(t, c, "broken") {
			statuses, _, _ := unstructured.NestedSlice(p.Object, "status", "containerStatuses")
			for _, cs := range statuses {
				reason, _, _ := unstructured.NestedString(cs.(map[string]any), "state", "waiting", "reason")
				if reason == "ErrImagePull" {
					waiting++
				}
			}
		}
		return waiting == 2
	})
	for _, p := range listPods(t, c, "broken") {
		if phase, _, _ := unstructured.NestedString(p.Object, "status", "phase"); phase != "Pending" {
			t.Errorf("pod %s is %s, want Pending", p.GetName(), phase)
		}
	}
	got, err := c.Dynamic().Resource(deployments).Namespace(c.Namespace).Get(t.Context(), "broken", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(got.Object, "status", "readyReplicas"); n != 0 {
		t.Errorf("deployment broken has %d ready replicas, want 0", n)
	}
}

// createDeployment creates a Deployment of two replicas of image in the
// test's namespace, and logs its pods if the test fails.
func createDeployment(t *testing.T, c *kubetest.Cluster, name, image string) {
	t.Helper()
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": name, "image": image}}},
			},
		},
	}}
	if _, err := c.Dynamic().Resource(deployments).Namespace(c.Namespace).Create(t.Context(), deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		d, _ := c.Dynamic().Resource(deployments).Namespace(c.Namespace).Get(context.Background(), name, metav1.GetOptions{})
		if d != nil {
			t.Logf("deployment status: %v", d.Object["status"])
		}
		list, _ := c.Dynamic().Resource(pods).Namespace(c.Namespace).List(context.Background(), metav1.ListOptions{})
		if list != nil {
			for _, p := range list.Items {
				t.Logf("pod %s: spec.nodeName %v, status %v", p.GetName(), p.Object["spec"].(map[string]any)["nodeName"], p.Object["status"])
			}
		}
	})
}

// listPods lists the pods labelled app=name in the test's namespace.
func listPods(t *testing.T, c *kubetest.Cluster, name string) []unstructured.Unstructured {
	t.Helper()
	list, err := c.Dynamic().Resource(pods).Namespace(c.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}
