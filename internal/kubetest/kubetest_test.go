package kubetest_test

import (
	"context"
	"os"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/poll"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kubetest.StopShared()
	os.Exit(code)
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func TestStart_ConfigMapRoundTrip(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	cms := c.Dynamic().Resource(configMaps).Namespace(c.Namespace)
	created := createConfigMap(t, cms, "greeting", map[string]any{"hello": "world"}, nil)

	got, err := cms.Get(t.Context(), "greeting", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetUID() != created.GetUID() {
		t.Errorf("uid = %s, want %s", got.GetUID(), created.GetUID())
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "hello"); v != "world" {
		t.Errorf("data.hello = %q, want %q", v, "world")
	}
	if c.RESTConfig().Host == "" || c.Kubeconfig == "" {
		t.Errorf("RESTConfig().Host = %q, Kubeconfig = %q; want both set", c.RESTConfig().Host, c.Kubeconfig)
	}
}

func TestStart_GivesEachTestItsOwnNamespace(t *testing.T) {
	t.Parallel()
	a, b := kubetest.Start(t), kubetest.Start(t)
	if a.Namespace == b.Namespace {
		t.Fatalf("two Starts gave the same namespace %s", a.Namespace)
	}
	if _, err := a.Dynamic().Resource(kubetest.NamespaceGVR).Get(t.Context(), a.Namespace, metav1.GetOptions{}); err != nil {
		t.Fatalf("namespace %s: %v", a.Namespace, err)
	}
}

// The controller-manager's garbage collector deletes dependents (Foreground,
// Background) or removes their owner reference (Orphan). Without it, a
// Foreground or Orphan delete leaves the owner behind with a finalizer.
func TestGarbageCollection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy       metav1.DeletionPropagation
		dependentsGo bool
	}{
		{metav1.DeletePropagationForeground, true},
		{metav1.DeletePropagationBackground, true},
		{metav1.DeletePropagationOrphan, false},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			t.Parallel()
			c := kubetest.Start(t)
			cms := c.Dynamic().Resource(configMaps).Namespace(c.Namespace)
			owner := createConfigMap(t, cms, "owner", nil, nil)
			createConfigMap(t, cms, "dependent", nil, []any{map[string]any{
				"apiVersion":         "v1",
				"kind":               "ConfigMap",
				"name":               owner.GetName(),
				"uid":                string(owner.GetUID()),
				"blockOwnerDeletion": true,
			}})

			policy := tc.policy
			if err := cms.Delete(t.Context(), "owner", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
				t.Fatal(err)
			}
			if tc.dependentsGo {
				poll.Until(t, "the owner and its dependent are gone", func() bool {
					return gone(t, cms, "owner") && gone(t, cms, "dependent")
				})
				return
			}
			poll.Until(t, "the owner is gone", func() bool { return gone(t, cms, "owner") })
			dep, err := cms.Get(t.Context(), "dependent", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("the orphaned dependent: %v", err)
			}
			if refs := dep.GetOwnerReferences(); len(refs) != 0 {
				t.Errorf("the orphaned dependent still has owner references %v", refs)
			}
		})
	}
}

// The controller-manager's namespace controller empties a deleted namespace
// and removes it; without it, the namespace stays Terminating.
func TestNamespaceDeletion(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	createConfigMap(t, c.Dynamic().Resource(configMaps).Namespace(c.Namespace), "content", nil, nil)
	namespaces := c.Dynamic().Resource(kubetest.NamespaceGVR)
	if err := namespaces.Delete(t.Context(), c.Namespace, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "namespace "+c.Namespace+" is gone", func() bool { return gone(t, namespaces, c.Namespace) })
}

func createConfigMap(t *testing.T, cms dynamic.ResourceInterface, name string, data map[string]any, owners []any) *unstructured.Unstructured {
	t.Helper()
	meta := map[string]any{"name": name}
	if owners != nil {
		meta["ownerReferences"] = owners
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}}
	if data != nil {
		obj.Object["data"] = data
	}
	created, err := cms.Create(t.Context(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap %s: %v", name, err)
	}
	return created
}

// gone reports whether name is not found; another error fails t.
func gone(t *testing.T, r dynamic.ResourceInterface, name string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := r.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true
	}
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return false
}
