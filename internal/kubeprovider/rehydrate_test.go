package kubeprovider_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/kubeprovider"
	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/providerhost"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
)

// clusterPolicy is a policy that places container apps on the provider
// labelled cluster=name.
func clusterPolicy(name string) string {
	return "package clusters\nmain := {\"provider_constraints\": {\"metadata\": {\"cluster\": \"" + name + "\"}}}"
}

// Issue 26: two clusters are two providers, and a policy chooses between
// them. An order placed on cluster A by the policy is rehydrated to
// cluster B once the policy says B: the app runs on B (every replica
// available) before A's namespace is asked to go, and A's namespace is
// removed after, by the deferred cleanup.
func TestSteward_RehydrateFromClusterAToB(t *testing.T) {
	t.Parallel()
	a, b := kubetest.StartWithPods(t), kubetest.StartSecondWithPods(t)
	kubeA, err := kubernetes.NewForConfig(a.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	kubeB, err := kubernetes.NewForConfig(b.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider = true })
	startKubeProvider(t, s, a, kubeprovider.DaemonConfig{Settings: providerhost.Settings{Name: "kube-a", Labels: map[string]string{"cluster": "a"}}})
	startKubeProvider(t, s, b, kubeprovider.DaemonConfig{Settings: providerhost.Settings{Name: "kube-b", Labels: map[string]string{"cluster": "b"}}})
	s.Do(t, "POST", "/api/v1/policies?id=cluster-choice", map[string]any{
		"display_name": "container apps on one cluster", "policy_type": "GLOBAL", "priority": 10,
		"label_selector": map[string]string{"service_type": "container-app"}, "rego_code": clusterPolicy("a"),
	}).Want(t, http.StatusCreated)

	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=web", map[string]any{"catalog_item_id": "web-app"}).Want(t, http.StatusCreated)
	var o struct {
		State        string `json:"state"`
		InstanceID   string `json:"instance_id"`
		ProviderName string `json:"provider_name"`
	}
	get := func() {
		s.Do(t, "GET", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusOK).JSON(t, &o)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the order when the test failed: %+v", o)
		}
	})
	poll.UntilWithin(t, rolloutWait, "the order is up", func() bool { get(); return o.State == "up" })
	if o.ProviderName != "kube-a" {
		t.Fatalf("the order was placed on %s, want kube-a (the policy's)", o.ProviderName)
	}
	oldNS := kubeprovider.Namespace(o.InstanceID)
	if _, err := kubeA.CoreV1().Namespaces().Get(t.Context(), oldNS, metav1.GetOptions{}); err != nil {
		t.Fatalf("the order's namespace on cluster A: %v", err)
	}

	// A finalizer of the test's holds A's namespace once its deletion is
	// asked for, so that the time of that request can be read.
	const hold = "steward.test/hold"
	holdPatch := []byte(`{"metadata":{"finalizers":["` + hold + `"]}}`)
	if _, err := kubeA.CoreV1().Namespaces().Patch(t.Context(), oldNS, types.MergePatchType, holdPatch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	release := func() {
		_, _ = kubeA.CoreV1().Namespaces().Patch(context.Background(), oldNS, types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	}
	t.Cleanup(release)
	s.Do(t, "PATCH", "/api/v1/policies/cluster-choice", map[string]any{"rego_code": clusterPolicy("b")}).Want(t, http.StatusOK)
	var op struct {
		ID       string `json:"id"`
		Done     bool   `json:"done"`
		Metadata struct {
			NewInstanceID string `json:"new_instance_id"`
		} `json:"metadata"`
		Error any `json:"error"`
	}
	s.Do(t, "POST", "/api/v1/catalog-item-instances/web:rehydrate", nil).Want(t, http.StatusAccepted).JSON(t, &op)
	newNS := kubeprovider.Namespace(op.Metadata.NewInstanceID)
	// Create before delete: B's Deployment became Available (both
	// replicas) no later than A's deletion was asked for (the API
	// server's own times, to the second).
	var deleted time.Time
	poll.UntilWithin(t, 2*time.Minute, "A's namespace is asked to be deleted", func() bool {
		ns, err := kubeA.CoreV1().Namespaces().Get(t.Context(), oldNS, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("A's namespace went despite the test's finalizer: %v", err)
		}
		if ns.DeletionTimestamp != nil {
			deleted = ns.DeletionTimestamp.Time
		}
		return ns.DeletionTimestamp != nil
	})
	d, err := kubeB.AppsV1().Deployments(newNS).Get(t.Context(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("B's deployment once A's deletion was asked: %v", err)
	}
	i := slices.IndexFunc(d.Status.Conditions, func(c appsv1.DeploymentCondition) bool {
		return c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue
	})
	switch {
	case i < 0 || d.Status.AvailableReplicas != 2:
		t.Errorf("A's deletion was asked at %s while B's app was not available: %+v", deleted, d.Status)
	case d.Status.Conditions[i].LastTransitionTime.After(deleted):
		t.Errorf("B's app became available at %s, after A's deletion was asked at %s", d.Status.Conditions[i].LastTransitionTime, deleted)
	}
	release()
	poll.UntilWithin(t, 2*time.Minute, "the rehydration ends", func() bool {
		s.Do(t, "GET", "/api/v1/operations/"+op.ID, nil).Want(t, http.StatusOK).JSON(t, &op)
		return op.Done
	})
	if op.Error != nil {
		t.Fatalf("the rehydration failed: %v", op.Error)
	}
	get()
	if o.ProviderName != "kube-b" || o.InstanceID != op.Metadata.NewInstanceID || o.State != "up" {
		t.Errorf("after the rehydration: %+v; want up on kube-b as %s", o, op.Metadata.NewInstanceID)
	}
	t.Cleanup(func() {
		_ = kubeB.CoreV1().Namespaces().Delete(context.Background(), kubeprovider.Namespace(o.InstanceID), metav1.DeleteOptions{})
	})
	poll.UntilWithin(t, time.Minute, "A's namespace is removed", func() bool {
		_, err := kubeA.CoreV1().Namespaces().Get(t.Context(), oldNS, metav1.GetOptions{})
		return err != nil
	})
}
