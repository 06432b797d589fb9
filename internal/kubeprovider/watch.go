package kubeprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/stewardhq/steward/pkg/provider"
)

// instanceIDPattern is an instance id that makes a namespace name
// (steward-<id>, a DNS label of at most 63 characters).
var instanceIDPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,53}[a-z0-9])?$`)

// metaGet is a plain read.
var metaGet = metav1.GetOptions{}

// watcher follows the cluster's apps through informers on the objects
// that carry an instance label (namespaces, Deployments, pods, Services):
// one list and one watch per kind, whatever the number of apps, and no
// polling. Every change of an app's objects queues its instance; a worker
// works out its state and reports what changed since the last report.
type watcher struct {
	p           *Provider
	factory     informers.SharedInformerFactory
	namespaces  corelisters.NamespaceLister
	deployments appslisters.DeploymentLister
	pods        corelisters.PodLister
	services    corelisters.ServiceLister
	queue       workqueue.TypedRateLimitingInterface[string]

	cancel   context.CancelFunc
	workers  sync.WaitGroup
	stopOnce sync.Once

	mu sync.Mutex
	// reported is what was last reported of each instance, to report
	// only changes.
	reported map[string]reportedState
}

// reportedState is what the last reports of an instance said.
type reportedState struct {
	status, runtime string
}

func newWatcher(p *Provider) *watcher {
	f := informers.NewSharedInformerFactoryWithOptions(p.kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = LabelInstance // only Steward's apps
	}))
	return &watcher{p: p, factory: f,
		namespaces:  f.Core().V1().Namespaces().Lister(),
		deployments: f.Apps().V1().Deployments().Lister(),
		pods:        f.Core().V1().Pods().Lister(),
		services:    f.Core().V1().Services().Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "kubeprovider"}),
		reported: map[string]reportedState{},
	}
}

// start registers the handlers, starts the informers, waits until they
// have listed the cluster (or syncCtx ends) and starts the workers.
func (w *watcher) start(syncCtx context.Context) error {
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    w.onObject,
		UpdateFunc: func(_, obj any) { w.onObject(obj) },
		DeleteFunc: w.onObject,
	}
	synced := []cache.InformerSynced{}
	for _, inf := range []cache.SharedIndexInformer{
		w.factory.Core().V1().Namespaces().Informer(), w.factory.Apps().V1().Deployments().Informer(),
		w.factory.Core().V1().Pods().Informer(), w.factory.Core().V1().Services().Informer(),
	} {
		reg, err := inf.AddEventHandler(handler)
		if err != nil {
			return err
		}
		synced = append(synced, reg.HasSynced)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(syncCtx.Done(), synced...) {
		return fmt.Errorf("the informers did not sync: %w", context.Cause(syncCtx))
	}
	for range w.p.cfg.Workers {
		w.workers.Go(func() { w.work(ctx) })
	}
	return nil
}

// stop ends the workers and the informers.
func (w *watcher) stop() {
	w.stopOnce.Do(func() {
		w.queue.ShutDown()
		if w.cancel != nil {
			w.cancel()
		}
		w.workers.Wait()
		w.factory.Shutdown()
	})
}

// onObject queues the instance an object belongs to.
func (w *watcher) onObject(obj any) {
	if gone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = gone.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if id := m.GetLabels()[LabelInstance]; id != "" {
		w.queue.Add(id)
	}
}

// enqueue asks for the instance's state to be worked out again.
func (w *watcher) enqueue(instanceID string) { w.queue.Add(instanceID) }

func (w *watcher) work(ctx context.Context) {
	for {
		id, shutdown := w.queue.Get()
		if shutdown {
			return
		}
		if err := w.sync(ctx, id); err != nil && ctx.Err() == nil {
			w.p.log.Warn("report an app's state", "instance_id", id, "error", err)
			w.queue.AddRateLimited(id)
		} else {
			w.queue.Forget(id)
		}
		w.queue.Done(id)
	}
}

// appState is an app as the informers show it.
type appState struct {
	exists, deleting bool
	// complete says every object was written: the Deployment, written
	// last, is there.
	complete         bool
	project, orderID string
	// spec is the spec last applied (nil: not kept).
	spec        *AppSpec
	observed    Observed
	outputs     provider.Outputs
	differences []string
}

// namespace is the instance's namespace as the informers hold it.
func (w *watcher) namespace(instanceID string) (*corev1.Namespace, error) {
	return w.namespaces.Get(Namespace(instanceID))
}

// state works the instance's state out from the informers' caches.
func (w *watcher) state(instanceID string) appState {
	ns, err := w.namespace(instanceID)
	if err != nil {
		return appState{observed: Observed{Status: StatusProvisioning, Message: "the namespace is not created yet"}}
	}
	st := appState{exists: true, deleting: ns.DeletionTimestamp != nil,
		project: ns.Annotations[annotationProject], orderID: ns.Labels[LabelOrder], spec: keptSpec(ns)}
	d, err := w.deployments.Deployments(ns.Name).Get(appName)
	if err != nil {
		d = nil
	}
	st.complete = d != nil
	podList, _ := w.pods.Pods(ns.Name).List(labels.SelectorFromSet(labels.Set{labelApp: appName}))
	pods := make([]corev1.Pod, 0, len(podList))
	for _, pod := range podList {
		pods = append(pods, *pod)
	}
	st.observed = w.p.rollout(instanceID, d, Observe(d, pods))
	svc, err := w.services.Services(ns.Name).Get(appName)
	if err != nil {
		svc = nil
	}
	st.outputs = outputs(ns.Name, w.p.cfg.ClusterDomain, svc, st.observed)
	if st.spec != nil && d != nil {
		st.differences = differences(*st.spec, d, svc)
	}
	return st
}

// keptSpec is the spec kept on the instance's namespace (nil: none, or
// one that does not decode).
func keptSpec(ns *corev1.Namespace) *AppSpec {
	raw := ns.Annotations[annotationSpec]
	if raw == "" {
		return nil
	}
	var s AppSpec
	if json.Unmarshal([]byte(raw), &s) != nil {
		return nil
	}
	return &s
}

// sync reports what changed of the instance since its last report: its
// status (with outputs and drift) and its runtime's health. With
// DriftEnforce a drifted app is applied again first.
func (w *watcher) sync(ctx context.Context, id string) error {
	if w.p.locks.Held(id) {
		// A create, update or repair is applying it; it queues the
		// instance again when it is done.
		return nil
	}
	at := time.Now().UTC() // before the caches are read: a report is never newer than what it says
	st := w.state(id)
	w.mu.Lock()
	last, seen := w.reported[id]
	w.mu.Unlock()
	switch {
	case !st.exists:
		if seen && last.status != string(provider.StatusDeleted) {
			err := w.report(ctx, provider.StatusReport{InstanceID: id, Status: provider.StatusDeleted,
				Message: "namespace " + Namespace(id) + " is gone", ObservedTime: at})
			if err != nil {
				return err
			}
		}
		w.mu.Lock()
		delete(w.reported, id)
		w.mu.Unlock()
		return nil
	case st.deleting:
		// Delete answered DELETING; the namespace's going is reported
		// DELETED, also after a restart of the provider.
		if !seen {
			w.setReported(id, func(s *reportedState) { s.status = string(provider.StatusDeleting) })
		}
		return nil
	case !st.complete && st.spec != nil:
		// Accepted, not all written (a create, one a killed provider cut
		// half way, a Deployment deleted by hand): written now. The
		// Deployment's arrival queues the app again.
		return w.p.finish(ctx, id, st)
	}
	diffs, fixed := st.differences, []string(nil)
	// Whatever the rollout's state: a scale by hand above what the
	// namespace's quota admits never finishes rolling out, so waiting for
	// the rollout would leave it as it is for good.
	if len(diffs) > 0 && w.p.cfg.Drift == DriftEnforce {
		var err error
		if fixed, err = w.p.enforce(ctx, id); err != nil {
			return err
		}
		diffs = nil
		if len(fixed) > 0 {
			w.p.log.InfoContext(ctx, "drift put back", "instance_id", id, "fixed", fixed)
		}
	}
	r := provider.StatusReport{InstanceID: id, Status: provider.Status(st.observed.Status), Message: st.observed.Message,
		ObservedTime: at, Outputs: st.outputs, Synced: &provider.Sync{InSync: len(diffs) == 0, Differences: diffs}}
	switch {
	case len(fixed) > 0:
		r.Message += "; drift put back: " + strings.Join(fixed, "; ")
	case len(diffs) > 0:
		r.Message += "; drifted from the spec: " + strings.Join(diffs, "; ")
	}
	keyed := r
	keyed.ObservedTime = time.Time{} // when is not what
	statusKey := reportKey(keyed)
	if statusKey != last.status {
		if err := w.report(ctx, r); err != nil {
			return err
		}
		w.setReported(id, func(s *reportedState) { s.status = statusKey })
	}
	if rt, ok := runtimeOf(st.observed); ok && st.project != "" && st.orderID != "" {
		runtimeKey := reportKey(rt)
		if runtimeKey != last.runtime {
			err := w.reportRuntime(ctx, st.project, st.orderID, provider.RuntimeReport{RuntimeState: rt, ObservedTime: at})
			if err != nil {
				return err
			}
			w.setReported(id, func(s *reportedState) { s.runtime = runtimeKey })
		}
	}
	return nil
}

func (w *watcher) setReported(id string, set func(*reportedState)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.reported[id]
	set(&s)
	w.reported[id] = s
}

// report sends a status report; an instance Steward does not know (another
// Steward's app on a shared cluster, or one it has forgotten) is not
// retried.
func (w *watcher) report(ctx context.Context, r provider.StatusReport) error {
	if w.p.cfg.Reporter == nil {
		return nil
	}
	err := w.p.cfg.Reporter.Report(ctx, r)
	if errors.Is(err, provider.ErrUnknownInstance) {
		return nil
	}
	return err
}

// reportRuntime sends a runtime report, as report does.
func (w *watcher) reportRuntime(ctx context.Context, project, orderID string, r provider.RuntimeReport) error {
	if w.p.cfg.Reporter == nil {
		return nil
	}
	err := w.p.cfg.Reporter.ReportRuntime(ctx, project, orderID, r)
	if errors.Is(err, provider.ErrUnknownInstance) {
		return nil
	}
	return err
}

// reportKey is what a report says (the caller leaves out when).
func reportKey(v any) string {
	b, _ := json.Marshal(v) // plain data
	return string(b)
}

// runtimeOf is the runtime health an observed app reports: healthy with
// every replica ready, degraded with some, failed when it cannot run;
// nothing while it rolls out.
func runtimeOf(o Observed) (provider.RuntimeState, bool) {
	switch {
	case o.Status == StatusFailed:
		return provider.RuntimeState{Health: provider.RuntimeFailed}, true
	case o.Status == StatusRunning && o.Degraded:
		return provider.RuntimeState{Health: provider.RuntimeDegraded}, true
	case o.Status == StatusRunning:
		return provider.RuntimeState{Health: provider.RuntimeHealthy}, true
	}
	return provider.RuntimeState{}, false
}

// enforce applies the app's kept spec again, under its lock, if its
// objects on the API server still differ from it, and returns what
// differed. The informers' caches may hold a namespace and a Deployment
// from either side of an apply (a spec just updated beside the Deployment
// before it, or the reverse, which applied would undo the update), so
// drift is judged again on the API server's objects: the Deployment and
// Service read before the namespace, as every apply writes the namespace
// first, so the spec read is never older than the Deployment.
func (p *Provider) enforce(ctx context.Context, id string) ([]string, error) {
	unlock := p.locks.Lock(id)
	defer unlock()
	d, err := p.getDeployment(ctx, id)
	if err != nil || d == nil {
		return nil, err // no Deployment: the watch finishes the app
	}
	svc, err := p.kube.CoreV1().Services(Namespace(id)).Get(ctx, appName, metaGet)
	switch {
	case apierrors.IsNotFound(err):
		svc = nil
	case err != nil:
		return nil, fmt.Errorf("kubeprovider: read service %s/%s: %w", Namespace(id), appName, err)
	}
	ns, err := p.kube.CoreV1().Namespaces().Get(ctx, Namespace(id), metaGet)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("kubeprovider: read namespace %s: %w", Namespace(id), err)
	}
	spec := keptSpec(ns)
	if spec == nil || ns.DeletionTimestamp != nil {
		return nil, nil
	}
	diffs := differences(*spec, d, svc)
	if len(diffs) == 0 {
		return nil, nil
	}
	o := Order{OrderID: ns.Labels[LabelOrder], InstanceID: id, Project: ns.Annotations[annotationProject], Spec: *spec}
	return diffs, p.apply(ctx, o, true)
}

// getDeployment reads the app's Deployment from the API server (not the
// cache); nil when there is none.
func (p *Provider) getDeployment(ctx context.Context, id string) (*appsv1.Deployment, error) {
	d, err := p.kube.AppsV1().Deployments(Namespace(id)).Get(ctx, appName, metaGet)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kubeprovider: read deployment %s/%s: %w", Namespace(id), appName, err)
	}
	return d, nil
}
