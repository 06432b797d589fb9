package adapter

import (
	"context"
	"strings"
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

// kubeConfig runs against a real API server (kubetest: kube-apiserver and
// kube-controller-manager's garbage collector and namespace controller).
// TEST_NS is the test's namespace; app is a namespace of the adapter's own.
const kubeConfig = `
adapter: {name: kube-test}
service_types: [cluster]
params:
  - {name: orderId, source: event.id, required: true}
  - {name: base, source: env.TEST_NS, required: true}
  - {name: order, source: {api_call: {url: "{{ .event.href }}"}}}
  - {name: deleting, source: {expression: "order.deleted_at != null"}}
when_deleting: deleting
resources:
  - name: app
    manifest: {apiVersion: v1, kind: Namespace, metadata: {name: "{{ .base }}-app"}}
    discovery: {by_name: "{{ .base }}-app"}
    delete_options: {after: [values, owner, orphaner]}
  - name: values
    manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: values, namespace: "{{ .base }}"}
      data: {order: "{{ .orderId }}", display_name: "{{ .order.display_name }}"}
    discovery: {namespace: "{{ .base }}", by_name: values}
  - name: owner
    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: owner, namespace: "{{ .base }}"}}
    discovery: {namespace: "{{ .base }}", by_name: owner}
    delete_options: {propagation_policy: Foreground}
  - name: orphaner
    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: orphaner, namespace: "{{ .base }}"}}
    discovery: {namespace: "{{ .base }}", by_name: orphaner}
    delete_options: {propagation_policy: Orphan}
  - name: credentials
    manifest: {apiVersion: v1, kind: Secret, metadata: {name: credentials, namespace: "{{ .base }}"}, stringData: {token: t}}
    discovery:
      namespace: "{{ .base }}"
      by_selectors: {label_selector: {steward.dev/order-id: "{{ .orderId }}"}}
    delete_options: {retain: true}
post:
  conditions:
    - type: Available
      status: {expression: "adapter.mode == 'create' && has(resources.app) && resources.app.status.phase == 'Active' ? 'True' : 'False'"}
  data:
    namespace: {expression: "has(resources.app) ? resources.app.metadata.name : ''"}
`

var (
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secretsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// holdFinalizer keeps the Foreground owner's dependent around until the
// test lets it go, so "the owner stays while its dependents exist" is
// observed, not raced.
const holdFinalizer = "steward.dev/test-hold"

func TestKube_CreationThenDeletionAcrossReconciles(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	tr, err := NewKubernetesTransport(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]byte(kubeConfig))
	if err != nil {
		t.Fatal(err)
	}
	steward := newFakeSteward(t)
	exec, err := NewExecutor(cfg, Deps{
		Transport: tr,
		API:       steward.api(),
		Env: func(k string) (string, bool) {
			return map[string]string{"TEST_NS": c.Namespace}[k], k == "TEST_NS"
		},
		Now:    func() time.Time { return testNow },
		Logger: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	dyn := c.Dynamic()
	cms := dyn.Resource(configMapsGVR).Namespace(c.Namespace)
	app := c.Namespace + "-app"
	t.Cleanup(func() { cleanupKube(t, dyn, c.Namespace, app) })
	run := func(ev Event) Outcome {
		t.Helper()
		out, err := exec.Execute(t.Context(), ev)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if out.Retry != nil {
			t.Fatalf("Retry: %v", out.Retry)
		}
		return out
	}

	// Creation: everything is applied, then reported from what is there.
	steward.setOrder("o1", order("o1", 1, "up", false))
	var out Outcome
	poll.Until(t, "the app namespace is Active and reported Available", func() bool {
		out = run(event("o1", 1, false))
		return cond(t, out, ConditionAvailable) == "True ResourcesCreated"
	})
	if got := cond(t, out, ConditionApplied) + "/" + cond(t, out, ConditionHealth); got != "True AppliedSuccessfully/True Healthy" {
		t.Fatalf("creation Applied/Health = %q: %+v", got, out.Report)
	}
	if string(out.Report.Data) != `{"namespace":"`+app+`"}` {
		t.Errorf("data = %s", out.Report.Data)
	}
	values, err := cms.Get(t.Context(), "values", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d, _, _ := unstructured.NestedStringMap(values.Object, "data"); d["order"] != "o1" || d["display_name"] != "Cluster o1" ||
		values.GetLabels()[LabelOrderID] != "o1" || values.GetAnnotations()[AnnotationGeneration] != "1" {
		t.Errorf("values = data %v, labels %v, annotations %v", d, values.GetLabels(), values.GetAnnotations())
	}
	if mf := values.GetManagedFields(); len(mf) == 0 || mf[0].Manager != "steward-adapter-kube-test" || mf[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("managed fields = %+v, want server-side apply by steward-adapter-kube-test", mf)
	}
	// Applying again is a no-op that still reports the same.
	if out = run(event("o1", 1, false)); cond(t, out, ConditionApplied) != "True AppliedSuccessfully" {
		t.Fatalf("second apply: %+v", out.Report)
	}

	// Dependents that Kubernetes' garbage collector looks after.
	owner, _ := cms.Get(t.Context(), "owner", metav1.GetOptions{})
	orphaner, _ := cms.Get(t.Context(), "orphaner", metav1.GetOptions{})
	createOwned(t, cms, "dependent", owner, []string{holdFinalizer})
	createOwned(t, cms, "orphan", orphaner, nil)

	// Deletion, pass 1: values goes, owner waits for its held dependent
	// (Foreground), so app (after owner) is not deleted yet.
	steward.setOrder("o1", order("o1", 2, "deleting", true))
	out = run(event("o1", 2, true))
	if out.Mode != ModeDelete || cond(t, out, ConditionApplied) != "True DeletionInProgress" || cond(t, out, ConditionHealth) != "True Healthy" {
		t.Fatalf("pass 1: mode %s, %+v", out.Mode, out.Report)
	}
	if msg := message(t, out, ConditionApplied); !containsAll(msg, "app (waits for owner", "owner (being deleted") {
		t.Errorf("pass 1 message = %q", msg)
	}
	if exists(t, cms, "values") {
		t.Error("values survived its delete")
	}
	poll.Until(t, "the garbage collector deletes the Foreground owner's dependent", func() bool {
		dep, err := cms.Get(t.Context(), "dependent", metav1.GetOptions{})
		return err == nil && dep.GetDeletionTimestamp() != nil
	})
	if o, err := cms.Get(t.Context(), "owner", metav1.GetOptions{}); err != nil || o.GetDeletionTimestamp() == nil {
		t.Fatalf("owner = %v, %v; want it still there, being deleted, while its dependent exists", o, err)
	}
	out = run(event("o1", 2, true))
	if msg := message(t, out, ConditionApplied); !containsAll(msg, "app (waits for owner", "foregroundDeletion") {
		t.Errorf("pass 2 message = %q, want app still waiting for owner", msg)
	}
	ns, err := dyn.Resource(kubetest.NamespaceGVR).Get(t.Context(), app, metav1.GetOptions{})
	if err != nil || ns.GetDeletionTimestamp() != nil {
		t.Fatalf("app namespace = %v, %v; want it untouched while owner remains", ns, err)
	}

	// The dependent's controller finishes: owner goes, then app, and the
	// deletion completes over the next reconciles.
	release(t, cms, "dependent")
	poll.Until(t, "the deletion completes", func() bool {
		out = run(event("o1", 2, true))
		return cond(t, out, ConditionFinalized) == "True Deleted"
	})
	for typ, want := range map[string]string{
		ConditionApplied: "False Deleted", ConditionAvailable: "False Deleted", ConditionHealth: "True Healthy",
	} {
		if got := cond(t, out, typ); got != want {
			t.Errorf("final %s = %q, want %q", typ, got, want)
		}
	}
	for _, name := range []string{"values", "owner", "dependent", "orphaner"} {
		if exists(t, cms, name) {
			t.Errorf("configmap %s still exists", name)
		}
	}
	orphan, err := cms.Get(t.Context(), "orphan", metav1.GetOptions{})
	if err != nil || len(orphan.GetOwnerReferences()) != 0 {
		t.Errorf("orphan = %v, %v; want it kept without owner references (Orphan)", orphan, err)
	}
	if _, err := dyn.Resource(secretsGVR).Namespace(c.Namespace).Get(t.Context(), "credentials", metav1.GetOptions{}); err != nil {
		t.Errorf("the retained secret: %v", err)
	}
	if _, err := dyn.Resource(kubetest.NamespaceGVR).Get(t.Context(), app, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("app namespace: %v, want it gone", err)
	}
}

func TestKube_ApplyRejectedByTheServerIsReported(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	tr, err := NewKubernetesTransport(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := goConfig("", nil, "good")
	cfg.Resources[0].Manifest["metadata"].(map[string]any)["namespace"] = c.Namespace
	cfg.Resources[0].Discovery.Namespace = c.Namespace
	bad := goConfig("", nil, "Bad_Name").Resources[0] // not a valid object name: 422
	bad.Name = "bad"
	bad.Manifest["metadata"].(map[string]any)["namespace"] = c.Namespace
	bad.Discovery = Discovery{Namespace: c.Namespace, ByName: "Bad_Name"}
	cfg.Resources = append(cfg.Resources, bad)
	exec, err := NewExecutor(cfg, Deps{Transport: tr, API: &HTTPAPI{}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Execute(t.Context(), event("o1", 1, false))
	if err != nil || out.Retry != nil {
		t.Fatalf("Execute = %+v, %v", out, err)
	}
	if got := cond(t, out, ConditionHealth) + "/" + cond(t, out, ConditionApplied); got != "False ApplyFailed/True ApplyFailed" {
		t.Errorf("Health/Applied = %q: %+v", got, out.Report)
	}
	if msg := message(t, out, ConditionHealth); !containsAll(msg, "resources bad", "Bad_Name") || !strings.Contains(strings.ToLower(msg), "invalid") {
		t.Errorf("Health message = %q, want the resource and the server's reason", msg)
	}
}

func createOwned(t *testing.T, cms dynamic.ResourceInterface, name string, owner *unstructured.Unstructured, finalizers []string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}}}
	obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.GetName(),
		UID: owner.GetUID(), BlockOwnerDeletion: new(true)}})
	obj.SetFinalizers(finalizers)
	if _, err := cms.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// release removes the test's finalizer from a configmap.
func release(t testing.TB, cms dynamic.ResourceInterface, name string) {
	t.Helper()
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	_, err := cms.Patch(context.WithoutCancel(t.Context()), name, "application/merge-patch+json", patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("release %s: %v", name, err)
	}
}

func exists(t *testing.T, r dynamic.ResourceInterface, name string) bool {
	t.Helper()
	_, err := r.Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return true
}

// cleanupKube lets go of what a failed test may have left: the held
// dependent (or the test namespace could never go) and the app namespace.
func cleanupKube(t *testing.T, dyn dynamic.Interface, namespace, app string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := dyn.Resource(configMapsGVR).Namespace(namespace).Patch(ctx, "dependent", "application/merge-patch+json",
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Logf("cleanup: release dependent: %v", err)
	}
	if err := dyn.Resource(kubetest.NamespaceGVR).Delete(ctx, app, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Logf("cleanup: delete namespace %s: %v", app, err)
	}
}
