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
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web"},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27"}}},
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
		d, _ := c.Dynamic().Resource(deployments).Namespace(c.Namespace).Get(context.Background(), "web", metav1.GetOptions{})
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
	poll.Until(t, "deployment web has 2 available replicas", func() bool {
		got, err := c.Dynamic().Resource(deployments).Namespace(c.Namespace).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n, _, _ := unstructured.NestedInt64(got.Object, "status", "availableReplicas")
		return n == 2
	})
	list, err := c.Dynamic().Resource(pods).Namespace(c.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range list.Items {
		phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
		node, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName")
		if phase == "Running" && strings.HasPrefix(node, "kwok-node-") {
			running++
		}
	}
	if running != 2 {
		t.Errorf("%d of %d pods run on a simulated node, want 2", running, len(list.Items))
	}
}
