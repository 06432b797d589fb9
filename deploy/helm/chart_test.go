// Package helm holds the test of Steward's Helm chart (deploy/helm/steward):
// helm lint, helm template, and the rendered objects applied with a
// server-side dry run to a real Kubernetes API server (internal/kubetest).
package helm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/stewardhq/steward/internal/kubetest"
)

// envRequireHelm makes a missing helm fail the test instead of skipping it
// (CI sets it, after `scripts/helm build`).
const envRequireHelm = "STEWARD_TEST_REQUIRE_HELM"

func TestMain(m *testing.M) {
	code := m.Run()
	kubetest.StopShared()
	os.Exit(code)
}

const chart = "steward"

// every turns on what the defaults leave off, so that every template renders.
var every = []string{"--set", "autoscaling.enabled=true", "--set", "serviceMonitor.enabled=true", "--set", "metrics.port=9090"}

// Issue 28: the chart lints, its schema refuses values without a database,
// and what it renders with every option on is what a platform team needs:
// probes on /livez and /readyz, the restricted security context, servers
// that refuse a schema behind them after a migration hook, replicas left
// to the autoscaler, a disruption budget.
func TestChart_LintsRendersAndRefusesBadValues(t *testing.T) {
	t.Parallel()
	helm := helmBinary(t)
	if out, err := run(helm, "lint", chart, "--strict", "-f", "steward/ci/test-values.yaml"); err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
	out, err := run(helm, "lint", chart, "--strict")
	if err == nil || !strings.Contains(out, "/database/existingSecret") {
		t.Fatalf("helm lint without a database: err %v, output\n%s\nwant the schema to name the database", err, out)
	}
	if out, err := run(helm, "template", "st", chart, "-f", "steward/ci/test-values.yaml", "--set", "replicaCount=0"); err == nil {
		t.Fatalf("helm template with replicaCount=0 rendered:\n%s", out)
	}

	objs := render(t, helm, every...)
	kinds := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		kinds[o.GetKind()] = o
	}
	for _, k := range []string{"Deployment", "Service", "ServiceAccount", "PodDisruptionBudget", "HorizontalPodAutoscaler", "ServiceMonitor", "Job"} {
		if kinds[k] == nil {
			t.Errorf("rendered no %s", k)
		}
	}
	dep := kinds["Deployment"]
	if dep == nil {
		t.FailNow()
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(dep.Object, "spec", "replicas"); found {
		t.Errorf("with autoscaling the Deployment still sets replicas (the HPA's and helm's would fight)")
	}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("Deployment has %d containers, want 1", len(containers))
	}
	c := containers[0].(map[string]any)
	for probe, path := range map[string]string{"livenessProbe": "/livez", "readinessProbe": "/readyz", "startupProbe": "/livez"} {
		if got, _, _ := unstructured.NestedString(c, probe, "httpGet", "path"); got != path {
			t.Errorf("%s path = %q, want %s", probe, got, path)
		}
	}
	args, _, _ := unstructured.NestedStringSlice(c, "args")
	if !slices.Contains(args, "--migrate=check") || !slices.Contains(args, "--drain-delay=5s") {
		t.Errorf("server args = %v, want --migrate=check (the hook migrates) and the drain delay", args)
	}
	// Issue 45: metrics.port serves /metrics on a port of its own, which
	// the Service names and the ServiceMonitor scrapes.
	if !slices.Contains(args, "--metrics-listen=0.0.0.0:9090") {
		t.Errorf("server args = %v, want --metrics-listen=0.0.0.0:9090 (metrics.port)", args)
	}
	if !hasPort(c, "ports", "containerPort", 9090) {
		t.Errorf("the container has no metrics port 9090: %v", c["ports"])
	}
	if svc := kinds["Service"]; svc == nil || !hasPort(svc.Object["spec"].(map[string]any), "ports", "port", 9090) {
		t.Errorf("the Service has no metrics port 9090")
	}
	if sm := kinds["ServiceMonitor"]; sm != nil {
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != "metrics" {
			t.Errorf("the ServiceMonitor scrapes %v, want the metrics port", endpoints)
		}
	}
	if ro, _, _ := unstructured.NestedBool(c, "securityContext", "readOnlyRootFilesystem"); !ro {
		t.Errorf("the container's root filesystem is writable")
	}
	job := kinds["Job"]
	if hook := job.GetAnnotations()["helm.sh/hook"]; hook != "pre-install,pre-upgrade" {
		t.Errorf("migration Job hook = %q, want pre-install,pre-upgrade", hook)
	}

	// By default /metrics stays on the http port, as before.
	for _, o := range render(t, helm) {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		c := containers[0].(map[string]any)
		if args, _, _ := unstructured.NestedStringSlice(c, "args"); slices.ContainsFunc(args, func(a string) bool {
			return strings.HasPrefix(a, "--metrics-listen")
		}) || hasPort(c, "ports", "name", "metrics") {
			t.Errorf("by default the Deployment serves metrics on a port of its own: %v", c["args"])
		}
	}
	if out, err := run(helm, "template", "st", chart, "-f", "steward/ci/test-values.yaml", "--set", "metrics.port=8080"); err == nil ||
		!strings.Contains(out, "metrics.port must not be 8080") {
		t.Errorf("helm template with metrics.port=8080 (the http port): err %v, output\n%s", err, out)
	}
}

// hasPort says whether obj's list of ports (a container's, a Service
// spec's) holds one whose field is want.
func hasPort(obj map[string]any, list, field string, want any) bool {
	ports, _, _ := unstructured.NestedSlice(obj, list)
	for _, p := range ports {
		got := p.(map[string]any)[field]
		if n, ok := got.(int64); ok {
			got = int(n)
		}
		if f, ok := got.(float64); ok {
			got = int(f)
		}
		if got == want {
			return true
		}
	}
	return false
}

// Issue 28: what the chart renders, with every option on, is accepted by a
// real API server (a server-side apply, dry run) in a namespace that
// enforces the restricted Pod Security Standard, without a warning. The
// ServiceMonitor is left out: its CRD (the Prometheus Operator's) is not
// installed there.
func TestChart_AppliesToAKubernetesAPIServer(t *testing.T) {
	t.Parallel()
	helm := helmBinary(t)
	objs := render(t, helm, every...)
	cluster := kubetest.Start(t)

	cfg := cluster.RESTConfig()
	warnings := &warningRecorder{}
	cfg.WarningHandler = warnings
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	ns, err := dyn.Resource(kubetest.NamespaceGVR).Get(ctx, cluster.Namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labels := ns.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for _, mode := range []string{"enforce", "warn", "audit"} {
		labels["pod-security.kubernetes.io/"+mode] = "restricted"
	}
	ns.SetLabels(labels)
	if _, err := dyn.Resource(kubetest.NamespaceGVR).Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	applied := 0
	for _, o := range objs {
		if o.GetKind() == "ServiceMonitor" {
			continue
		}
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Errorf("%s %s: %v", gvk.Kind, o.GetName(), err)
			continue
		}
		o.SetNamespace(cluster.Namespace)
		data, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		_, err = dyn.Resource(m.Resource).Namespace(cluster.Namespace).Patch(ctx, o.GetName(), types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: "steward-chart-test", DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Errorf("server-side dry run of %s %s: %v", gvk.Kind, o.GetName(), err)
			continue
		}
		applied++
	}
	if applied < 6 {
		t.Errorf("applied %d objects, want the Deployment, Service, ServiceAccount, PDB, HPA and Job", applied)
	}
	if w := warnings.all(); len(w) > 0 {
		t.Errorf("the API server warned:\n%s", strings.Join(w, "\n"))
	}
}

// render runs helm template with the test values (and extra) and decodes
// every object.
func render(t *testing.T, helm string, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	args := append([]string{"template", "st", chart, "-n", "steward", "-f", "steward/ci/test-values.yaml"}, extra...)
	out, err := run(helm, args...)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("decode what helm rendered: %v\n%s", err, out)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs
}

// helmBinary returns scripts/helm's pinned helm, skipping the test when it
// is not built (failing it when envRequireHelm is set).
func helmBinary(t *testing.T) string {
	t.Helper()
	script, err := filepath.Abs("../../scripts/helm")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(script, "path").CombinedOutput()
	if err != nil {
		if os.Getenv(envRequireHelm) == "1" {
			t.Fatalf("%s=1: %s", envRequireHelm, out)
		}
		t.Skipf("no helm: %s", out)
	}
	return strings.TrimSpace(string(out))
}

// run runs helm in this directory and returns its combined output.
func run(helm string, args ...string) (string, error) {
	var b bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

// warningRecorder keeps the API server's warnings (a Pod Security
// violation of a Deployment's template is one).
type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *warningRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

var _ rest.WarningHandler = (*warningRecorder)(nil)
