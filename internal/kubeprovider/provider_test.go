package kubeprovider_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"errors"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/stewardhq/steward/internal/kubeprovider"
	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/pkg/provider"
)

// reports records what a provider reports.
type reports struct {
	mu      sync.Mutex
	status  map[string][]provider.StatusReport
	runtime map[string][]provider.RuntimeReport
	repair  map[string][]provider.RepairReport
}

func newReports() *reports {
	return &reports{status: map[string][]provider.StatusReport{}, runtime: map[string][]provider.RuntimeReport{},
		repair: map[string][]provider.RepairReport{}}
}

func (r *reports) Report(_ context.Context, s provider.StatusReport) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status[s.InstanceID] = append(r.status[s.InstanceID], s)
	return nil
}

func (r *reports) ReportRuntime(_ context.Context, _, appInstanceID string, rt provider.RuntimeReport) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runtime[appInstanceID] = append(r.runtime[appInstanceID], rt)
	return nil
}

func (r *reports) ReportRepair(_ context.Context, req provider.RepairRequest, rep provider.RepairReport) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.repair[req.OperationID] = append(r.repair[req.OperationID], rep)
	return nil
}

// last is the instance's latest status report (zero: none yet).
func (r *reports) last(id string) provider.StatusReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.status[id]; len(s) > 0 {
		return s[len(s)-1]
	}
	return provider.StatusReport{}
}

func (r *reports) lastRepair(op string) provider.RepairReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.repair[op]; len(s) > 0 {
		return s[len(s)-1]
	}
	return provider.RepairReport{}
}

// said reports whether any status report of the instance contains text.
func (r *reports) said(id, text string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.status[id], func(s provider.StatusReport) bool { return strings.Contains(s.Message, text) })
}

func uniqueID(t testing.TB) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t" + hex.EncodeToString(b[:])
}

// openProvider opens a provider on the cluster with pods.
func openProvider(t *testing.T, c *kubetest.Cluster, cfg kubeprovider.Config) (*kubeprovider.Provider, kubernetes.Interface) {
	t.Helper()
	cfg.REST = c.RESTConfig()
	if os.Getenv("KUBEPROVIDER_TEST_LOG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	p, err := kubeprovider.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	kube, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return p, kube
}

// createApp creates an app of two replicas of image, exposed on 80, and
// deletes its namespace at cleanup.
func createApp(t *testing.T, p *kubeprovider.Provider, kube kubernetes.Interface, image string) string {
	t.Helper()
	return createAppOf(t, p, kube, appSpec(image, 2))
}

// createAppOf creates an app of spec, as createApp does.
func createAppOf(t *testing.T, p *kubeprovider.Provider, kube kubernetes.Interface, spec map[string]any) string {
	t.Helper()
	id := uniqueID(t)
	t.Cleanup(func() {
		_ = kube.CoreV1().Namespaces().Delete(context.Background(), kubeprovider.Namespace(id), metav1.DeleteOptions{})
	})
	got, err := p.Create(t.Context(), provider.CreateRequest{InstanceID: id, ServiceType: kubeprovider.ServiceType,
		Spec: spec, Metadata: provider.CreateMetadata{OrderID: "order-" + id, Project: "default"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != provider.StatusProvisioning {
		t.Errorf("create answered %s, want PROVISIONING", got.Status)
	}
	return id
}

func appSpec(image string, replicas int) map[string]any {
	return map[string]any{"service_type": kubeprovider.ServiceType, "image": image, "replicas": replicas,
		"env":    []any{map[string]any{"name": "MODE", "value": "prod"}},
		"ports":  []any{map[string]any{"container_port": 8080, "service_port": 80}},
		"expose": "cluster"}
}

func waitStatus(t *testing.T, r *reports, id string, want provider.Status) provider.StatusReport {
	t.Helper()
	var last provider.StatusReport
	poll.UntilWithin(t, rolloutWait, fmt.Sprintf("instance %s reported %s", id, want), func() bool {
		last = r.last(id)
		return last.Status == want
	})
	return last
}

// Issue 26, at the provider: an app reported RUNNING by the watch once
// its pods run, with its outputs; kubectl scale by hand is drift; a
// restart repair rolls out new pods; an update to an image that cannot be
// pulled is FAILED, and the old spec applied again runs; delete reports
// DELETED once the namespace is gone.
func TestProvider_WatchesAppsThroughTheirLifecycle(t *testing.T) {
	t.Parallel()
	c := kubetest.StartWithPods(t)
	r := newReports()
	p, kube := openProvider(t, c, kubeprovider.Config{Reporter: r})
	id := createApp(t, p, kube, "nginx:1.27")
	ns := kubeprovider.Namespace(id)

	up := waitStatus(t, r, id, provider.StatusRunning)
	if up.Outputs["service_host"] != "app."+ns+".svc.cluster.local" || up.Outputs["ports"] != "80/TCP" ||
		up.Outputs["cluster_ip"] == nil || up.Outputs["ready_replicas"] != int32(2) {
		t.Errorf("outputs %v; want the service's host, cluster IP, port 80/TCP and 2 ready replicas", up.Outputs)
	}
	if up.Synced == nil || !up.Synced.InSync {
		t.Errorf("synced %+v, want in sync", up.Synced)
	}
	got, err := p.Get(t.Context(), id)
	if err != nil || got.Status != provider.StatusRunning {
		t.Errorf("get = %+v, %v; want RUNNING", got, err)
	}
	// A replayed create changes nothing.

	d0, err := kube.AppsV1().Deployments(ns).Get(t.Context(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create(t.Context(), provider.CreateRequest{InstanceID: id, ServiceType: kubeprovider.ServiceType,
		Spec: appSpec("nginx:1.27", 2), Metadata: provider.CreateMetadata{OrderID: "order-" + id, Project: "default"}}); err != nil {
		t.Fatal(err)
	}
	if d1, _ := kube.AppsV1().Deployments(ns).Get(t.Context(), "app", metav1.GetOptions{}); d1.Generation != d0.Generation {
		t.Errorf("a replayed create moved the deployment from generation %d to %d", d0.Generation, d1.Generation)
	}

	// kubectl scale, by hand: Synced=False naming it.
	scale(t, kube, ns, 4)
	poll.UntilWithin(t, rolloutWait, "the scale is reported as drift", func() bool {
		s := r.last(id).Synced
		return s != nil && !s.InSync && slices.Contains(s.Differences, "replicas: want 2, found 4")
	})

	// A restart repair: a new ReplicaSet, the app running again.
	rsBefore := replicaSets(t, kube, ns)
	if _, err := p.Repair(t.Context(), provider.RepairRequest{InstanceID: id, OperationID: "op-" + id,
		Action: provider.RepairActionRestart, Scope: provider.ScopeWholeRuntime, ReportPath: "/x"}); err != nil {
		t.Fatal(err)
	}
	poll.UntilWithin(t, rolloutWait, "the restart succeeded", func() bool { return r.lastRepair("op-"+id).Status == provider.RepairSucceeded })
	if rs := replicaSets(t, kube, ns); len(rs) != len(rsBefore)+1 {
		t.Errorf("%d ReplicaSets after the restart, want %d", len(rs), len(rsBefore)+1)
	}
	final := r.lastRepair("op-" + id)
	for _, s := range final.Steps {
		if s.Status != provider.RepairSucceeded && s.Status != provider.RepairSkipped {
			t.Errorf("step %s is %s (%s)", s.Name, s.Status, s.Message)
		}
	}
	// The restart re-applied the spec: the scale by hand is undone.
	poll.UntilWithin(t, rolloutWait, "the app is back in sync with 2 replicas", func() bool {
		l := r.last(id)
		return l.Synced != nil && l.Synced.InSync && l.Status == provider.StatusRunning && l.Outputs["replicas"] == int32(2)
	})

	// A reconcile applies the spec again and restarts nothing: the scale
	// by hand is undone, and no ReplicaSet is added.
	scale(t, kube, ns, 3)
	poll.UntilWithin(t, rolloutWait, "the second scale is reported as drift", func() bool {
		s := r.last(id).Synced
		return s != nil && !s.InSync && slices.Contains(s.Differences, "replicas: want 2, found 3")
	})
	rsBefore = replicaSets(t, kube, ns)
	if _, err := p.Repair(t.Context(), provider.RepairRequest{InstanceID: id, OperationID: "reconcile-" + id,
		Action: provider.RepairActionReconcile, Scope: provider.ScopeWholeRuntime, ReportPath: "/x"}); err != nil {
		t.Fatal(err)
	}
	poll.UntilWithin(t, rolloutWait, "the reconcile succeeded", func() bool { return r.lastRepair("reconcile-"+id).Status == provider.RepairSucceeded })
	if d, err := kube.AppsV1().Deployments(ns).Get(t.Context(), "app", metav1.GetOptions{}); err != nil || *d.Spec.Replicas != 2 {
		t.Errorf("after the reconcile the deployment wants %v replicas (%v), want 2", d.Spec.Replicas, err)
	}
	if rs := replicaSets(t, kube, ns); len(rs) != len(rsBefore) {
		t.Errorf("%d ReplicaSets after the reconcile, want %d: a reconcile restarts nothing", len(rs), len(rsBefore))
	}
	// A redelivered restart of an operation already done restarts nothing.
	if got, err := p.Repair(t.Context(), provider.RepairRequest{InstanceID: id, OperationID: "op-" + id,
		Action: provider.RepairActionRestart, Scope: provider.ScopeWholeRuntime, ReportPath: "/x"}); err != nil ||
		got.Status != provider.RepairSucceeded {
		t.Errorf("redelivered restart = %+v, %v; want its earlier outcome, succeeded", got, err)
	}
	if rs := replicaSets(t, kube, ns); len(rs) != len(rsBefore) {
		t.Errorf("%d ReplicaSets after a redelivered restart, want %d", len(rs), len(rsBefore))
	}

	// An update to an image that cannot be pulled fails; the old spec
	// applied again (a rollback) runs.
	if _, err := p.Update(t.Context(), provider.UpdateRequest{InstanceID: id, ServiceType: kubeprovider.ServiceType,
		Spec: appSpec("unpullable.invalid/app:2", 2)}); err != nil {
		t.Fatal(err)
	}
	failed := waitStatus(t, r, id, provider.StatusFailed)
	if !strings.Contains(failed.Message, "ErrImagePull") {
		t.Errorf("failed update's message %q does not say ErrImagePull", failed.Message)
	}
	if _, err := p.Update(t.Context(), provider.UpdateRequest{InstanceID: id, ServiceType: kubeprovider.ServiceType,
		Spec: appSpec("nginx:1.27", 2)}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, r, id, provider.StatusRunning)

	if _, err := p.Delete(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			n, err := kube.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
			if err == nil {
				t.Logf("namespace %s: %+v", ns, n.Status)
			}
			pods, _ := kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
			for _, p := range pods.Items {
				t.Logf("pod %s: deletion %v finalizers %v phase %s", p.Name, p.DeletionTimestamp, p.Finalizers, p.Status.Phase)
			}
		}
	})
	waitStatus(t, r, id, provider.StatusDeleted)
	if _, err := p.Get(t.Context(), id); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("get after delete: %v, want ErrNotFound", err)
	}
	if _, err := p.Delete(t.Context(), id); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
}

// With drift enforced, a scale by hand is put back and said so.
//
// Not parallel, as no test with an enforcing provider is: it puts back at
// once what the other tests change by hand on the shared cluster, before
// they see it.
func TestProvider_EnforcedDriftIsPutBack(t *testing.T) {
	c := kubetest.StartWithPods(t)
	r := newReports()
	p, kube := openProvider(t, c, kubeprovider.Config{Reporter: r, Drift: kubeprovider.DriftEnforce})
	id := createApp(t, p, kube, "nginx:1.27")
	ns := kubeprovider.Namespace(id)
	waitStatus(t, r, id, provider.StatusRunning)
	scale(t, kube, ns, 5)
	poll.UntilWithin(t, rolloutWait, "the drift is put back and said so", func() bool {
		return r.said(id, "drift put back: replicas: want 2, found 5")
	})
	poll.UntilWithin(t, rolloutWait, "the deployment has 2 replicas again", func() bool {
		d, err := kube.AppsV1().Deployments(ns).Get(t.Context(), "app", metav1.GetOptions{})
		return err == nil && *d.Spec.Replicas == 2
	})
}

// Issue 46: replicas scaled by hand above what the namespace's quota
// admits leave a rollout that never finishes, and its status names the
// quota and what it refused; an enforcing provider puts the replicas back
// all the same. Not parallel: it enforces (see above).
func TestProvider_EnforcedDriftIsPutBackPastTheQuota(t *testing.T) {
	c := kubetest.StartWithPods(t)
	r := newReports()
	p, kube := openProvider(t, c, kubeprovider.Config{Reporter: r})
	spec := appSpec("nginx:1.27", 2)
	// The quota admits 3 pods: the 2 replicas and a rollout's surge.
	spec["resources"] = map[string]any{"requests": map[string]any{"cpu": "100m"}, "limits": map[string]any{"cpu": "100m"}}
	id := createAppOf(t, p, kube, spec)
	ns := kubeprovider.Namespace(id)
	waitStatus(t, r, id, provider.StatusRunning)

	scale(t, kube, ns, 4)
	var blocked provider.StatusReport
	poll.UntilWithin(t, rolloutWait, "the blocked rollout names the quota", func() bool {
		blocked = r.last(id)
		return strings.Contains(blocked.Message, "blocked by the namespace's quota app-resources: ")
	})
	if blocked.Status != provider.StatusProvisioning || !strings.Contains(blocked.Message, " of 4 replicas created") ||
		!strings.Contains(blocked.Message, "it refused a pod requesting limits.cpu=100m,requests.cpu=100m") {
		t.Errorf("blocked rollout reported %s %q; want PROVISIONING saying what the quota refused", blocked.Status, blocked.Message)
	}

	enforced := newReports()
	openProvider(t, c, kubeprovider.Config{Reporter: enforced, Drift: kubeprovider.DriftEnforce})
	poll.UntilWithin(t, rolloutWait, "the deployment has 2 replicas again", func() bool {
		d, err := kube.AppsV1().Deployments(ns).Get(t.Context(), "app", metav1.GetOptions{})
		return err == nil && *d.Spec.Replicas == 2
	})
	poll.UntilWithin(t, rolloutWait, "the enforcing provider says it put the replicas back", func() bool {
		return enforced.said(id, "drift put back: replicas: want 2, found 4")
	})
	waitStatus(t, r, id, provider.StatusRunning)
}

// Resources above the provider's bounds are refused before anything is
// made, naming the field; a bad spec is a 400 too.
func TestProvider_RefusesResourcesAboveItsBounds(t *testing.T) {
	t.Parallel()
	c := kubetest.StartWithPods(t)
	p, _ := openProvider(t, c, kubeprovider.Config{MaxCPU: "2", MaxMemory: "1Gi"})
	spec := appSpec("nginx:1.27", 1)
	spec["resources"] = map[string]any{"limits": map[string]any{"cpu": "4", "memory": "512Mi"}}
	err := p.Validate(t.Context(), provider.CreateRequest{ServiceType: kubeprovider.ServiceType, Spec: spec})
	var he *provider.HTTPError
	if !errors.As(err, &he) || he.Code != http.StatusBadRequest || he.Reason != "RESOURCES_ABOVE_LIMIT" ||
		!strings.Contains(he.Message, "resources.limits.cpu") || strings.Contains(he.Message, "memory") {
		t.Errorf("validate = %v; want 400 RESOURCES_ABOVE_LIMIT naming resources.limits.cpu only", err)
	}
	id := uniqueID(t)
	if _, err := p.Create(t.Context(), provider.CreateRequest{InstanceID: id, ServiceType: kubeprovider.ServiceType, Spec: spec}); !errors.As(err, &he) {
		t.Errorf("create = %v, want the refusal", err)
	}
	if _, err := p.Get(t.Context(), id); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("a refused create made something: get = %v", err)
	}
	spec["resources"] = map[string]any{"limits": map[string]any{"cpu": "1"}}
	if err := p.Validate(t.Context(), provider.CreateRequest{ServiceType: kubeprovider.ServiceType, Spec: spec}); err != nil {
		t.Errorf("validate within bounds = %v", err)
	}
	spec["replicas"] = 51
	if err := p.Validate(t.Context(), provider.CreateRequest{ServiceType: kubeprovider.ServiceType, Spec: spec}); !errors.As(err, &he) ||
		he.Reason != "INVALID_ARGUMENT" {
		t.Errorf("validate 51 replicas = %v, want INVALID_ARGUMENT", err)
	}
}

func scale(t *testing.T, kube kubernetes.Interface, ns string, n int) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n)
	_, err := kube.AppsV1().Deployments(ns).Patch(t.Context(), "app", types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "kubectl"}, "scale")
	if err != nil {
		t.Fatal(err)
	}
}

func replicaSets(t *testing.T, kube kubernetes.Interface, ns string) []appsv1.ReplicaSet {
	t.Helper()
	list, err := kube.AppsV1().ReplicaSets(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}
