package kubeprovider

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/keylock"
	"github.com/stewardhq/steward/pkg/provider"
)

// ServiceType is the service type the provider realises.
const ServiceType = "container-app"

// Drift modes: what the provider does with an app whose objects differ
// from its spec.
const (
	// DriftReport reports the differences (the order shows Synced=False).
	DriftReport = "report"
	// DriftEnforce applies the spec again, and says what it put back.
	DriftEnforce = "enforce"
)

// Reporter is where the provider tells Steward what it observes:
// [provider.HTTPReporter] in a daemon.
type Reporter interface {
	provider.StatusReporter
	ReportRuntime(ctx context.Context, project, appInstanceID string, r provider.RuntimeReport) error
	ReportRepair(ctx context.Context, req provider.RepairRequest, r provider.RepairReport) error
}

// Config configures a [Provider].
type Config struct {
	// REST is how to reach the cluster (a kubeconfig's context).
	REST *rest.Config
	// Reporter receives the status, runtime and repair reports; nil
	// reports nothing (Create, Get and Update still answer).
	Reporter Reporter
	// Drift is DriftReport (the default) or DriftEnforce.
	Drift string
	// MaxCPU and MaxMemory bound what one container may request or be
	// limited to ("2", "4Gi"); empty: no bound. An order above them is
	// refused (400, RESOURCES_ABOVE_LIMIT) before anything is made.
	MaxCPU, MaxMemory string
	// QPS bounds the requests per second to the API server (client-go's
	// own default, 5, throttles a burst of creates to about one a second:
	// each writes six objects); twice as many may go in a burst. 100 by
	// default.
	QPS float32
	// Workers is how many instances are observed (and finished: a
	// create's objects after its namespace) at once; 8 by default.
	Workers int
	// SyncTimeout bounds the first listing of the cluster's apps; 1
	// minute by default.
	SyncTimeout time.Duration
	// ClusterDomain is the cluster's DNS domain, in the service's name in
	// the outputs; cluster.local by default.
	ClusterDomain string
	// RepairTimeout bounds how long a repair waits for the app to run
	// again; 2 minutes by default.
	RepairTimeout time.Duration
	Logger        *slog.Logger
}

// Provider realises container-app instances on one cluster. It watches
// the cluster's apps through informers (one watch per kind, whatever the
// number of apps) and reports each change of an app's state. It is safe
// for concurrent use.
type Provider struct {
	cfg     Config
	log     *slog.Logger
	kube    kubernetes.Interface
	applier Applier
	watch   *watcher
	limits  resourceLimits
	locks   keylock.Locks

	mu sync.Mutex
	// applied is the Deployment generation each instance's last apply
	// wrote: until the informers show it, the app is still being applied,
	// whatever the older Deployment they hold says.
	applied map[string]int64
	// settled is the Deployment generation at which each instance last
	// had every replica ready: an app applied since and not yet settled
	// is still rolling out, not degraded.
	settled map[string]int64
	repairs *repairs
}

// resourceLimits are Config's bounds, parsed.
type resourceLimits struct{ cpu, memory *resource.Quantity }

// Open connects to the cluster, lists its apps and starts watching them;
// it returns once the informers hold the apps, or an error if the cluster
// cannot be listed within Config.SyncTimeout.
func Open(ctx context.Context, cfg Config) (*Provider, error) {
	if cfg.REST == nil {
		return nil, errors.New("kubeprovider: a cluster (REST config) is required")
	}
	cfg.Drift = cmp.Or(cfg.Drift, DriftReport)
	if cfg.Drift != DriftReport && cfg.Drift != DriftEnforce {
		return nil, fmt.Errorf("kubeprovider: drift %q: want %s or %s", cfg.Drift, DriftReport, DriftEnforce)
	}
	cfg.Workers = cmp.Or(cfg.Workers, 8)
	cfg.QPS = cmp.Or(cfg.QPS, 100)
	cfg.SyncTimeout = cmp.Or(cfg.SyncTimeout, time.Minute)
	cfg.ClusterDomain = cmp.Or(cfg.ClusterDomain, "cluster.local")
	cfg.RepairTimeout = cmp.Or(cfg.RepairTimeout, 2*time.Minute)
	p := &Provider{cfg: cfg, log: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)), applied: map[string]int64{}, settled: map[string]int64{}}
	p.repairs = newRepairs(p)
	var err error
	if p.limits.cpu, err = parseQuantity(cfg.MaxCPU); err != nil {
		return nil, fmt.Errorf("kubeprovider: max cpu %q: %w", cfg.MaxCPU, err)
	}
	if p.limits.memory, err = parseQuantity(cfg.MaxMemory); err != nil {
		return nil, fmt.Errorf("kubeprovider: max memory %q: %w", cfg.MaxMemory, err)
	}
	rc := rest.CopyConfig(cfg.REST)
	rc.UserAgent = "steward-kubernetes-provider"
	rc.QPS, rc.Burst = cfg.QPS, int(2*cfg.QPS)
	if p.kube, err = kubernetes.NewForConfig(rc); err != nil {
		return nil, fmt.Errorf("kubeprovider: %w", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubeprovider: %w", err)
	}
	p.applier = Applier{Dynamic: dyn}
	p.watch = newWatcher(p)
	syncCtx, cancel := context.WithTimeout(ctx, cfg.SyncTimeout)
	defer cancel()
	if err := p.watch.start(syncCtx); err != nil {
		p.Close()
		return nil, fmt.Errorf("kubeprovider: list the cluster's apps at %s: %w", rc.Host, err)
	}
	return p, nil
}

// Close stops watching and waits for the observations and repairs under
// way. It is idempotent.
func (p *Provider) Close() {
	if p.watch != nil {
		p.watch.stop()
	}
	p.repairs.wait()
}

// Cluster says which API server the provider serves.
func (p *Provider) Cluster() string { return p.cfg.REST.Host }

var (
	_ provider.Provider  = (*Provider)(nil)
	_ provider.Updater   = (*Provider)(nil)
	_ provider.Validator = (*Provider)(nil)
	_ provider.Repairer  = (*Provider)(nil)
)

// requestError is a refusal of a request (400) with a stable reason.
func requestError(reason string, err error) error {
	return &provider.HTTPError{Code: http.StatusBadRequest, Reason: reason, Message: err.Error()}
}

// parseSpec reads and checks a request's spec: a spec the schema let
// through but the provider cannot realise (or may not: resources above
// its bounds) is refused.
func (p *Provider) parseSpec(serviceType string, raw map[string]any) (AppSpec, error) {
	if serviceType != ServiceType {
		return AppSpec{}, requestError("UNSUPPORTED_SERVICE_TYPE",
			fmt.Errorf("this provider realises %s, not %q", ServiceType, serviceType))
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return AppSpec{}, requestError("INVALID_ARGUMENT", fmt.Errorf("spec: %w", err))
	}
	var s AppSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return AppSpec{}, requestError("INVALID_ARGUMENT", fmt.Errorf("spec: %w", err))
	}
	if err := s.Validate(); err != nil {
		return AppSpec{}, requestError("INVALID_ARGUMENT", err)
	}
	if err := p.limits.check(s.Resources); err != nil {
		return AppSpec{}, requestError("RESOURCES_ABOVE_LIMIT", err)
	}
	return s, nil
}

// check names each request or limit above the bounds.
func (l resourceLimits) check(r *Resources) error {
	if r == nil {
		return nil
	}
	var errs invalid.Errors
	for _, c := range []struct {
		path, value string
		max         *resource.Quantity
	}{
		{"resources.requests.cpu", r.Requests.CPU, l.cpu}, {"resources.limits.cpu", r.Limits.CPU, l.cpu},
		{"resources.requests.memory", r.Requests.Memory, l.memory}, {"resources.limits.memory", r.Limits.Memory, l.memory},
	} {
		q, _ := parseQuantity(c.value) // validated
		if q != nil && c.max != nil && q.Cmp(*c.max) > 0 {
			errs.Add(c.path, "%s is above what this provider allows a container (%s)", c.value, c.max.String())
		}
	}
	return errs.Err()
}

// Validate says whether Create would accept the spec, making nothing.
func (p *Provider) Validate(_ context.Context, req provider.CreateRequest) error {
	_, err := p.parseSpec(req.ServiceType, req.Spec)
	return err
}

// Create writes the app's namespace, with its spec, and answers the app's
// state: PROVISIONING until the informers see it roll out; the watch
// writes the other objects (server-side apply: a replayed create changes
// nothing) and reports RUNNING or FAILED.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) (provider.Instance, error) {
	s, err := p.parseSpec(req.ServiceType, req.Spec)
	if err != nil {
		return provider.Instance{}, err
	}
	if !instanceIDPattern.MatchString(req.InstanceID) {
		return provider.Instance{}, requestError("INVALID_ARGUMENT", fmt.Errorf("instance id %q is not a DNS label", req.InstanceID))
	}
	defer p.watch.enqueue(req.InstanceID) // after unlock: the watch reports what came of it
	unlock := p.locks.Lock(req.InstanceID)
	defer unlock()
	if ns, err := p.watch.namespace(req.InstanceID); err == nil && ns.DeletionTimestamp != nil {
		return provider.Instance{}, &provider.HTTPError{Code: http.StatusConflict, Reason: "INSTANCE_DELETING",
			Message: fmt.Sprintf("instance %s is being deleted", req.InstanceID)}
	}
	order := Order{OrderID: req.Metadata.OrderID, InstanceID: req.InstanceID, Project: req.Metadata.Project, Spec: s}
	objs, err := Manifests(order)
	if err != nil {
		return provider.Instance{}, err
	}
	// The namespace, with the spec on it, is the create's durable record:
	// written, the create is accepted, and the watch writes the rest (see
	// finish), also after a restart. So a create costs one request
	// before its answer, however many creates wait on the rate limit.
	if _, err := p.applier.Apply(ctx, objs[:1]); err != nil {
		return provider.Instance{}, err
	}
	p.log.InfoContext(ctx, "app accepted", "instance_id", req.InstanceID, "order_id", order.OrderID,
		"namespace", Namespace(req.InstanceID), "image", s.Image, "replicas", replicas(s))
	return p.instance(req.InstanceID), nil
}

// finish writes the objects of an accepted app whose Deployment is not
// there: a create's (Create wrote only the namespace), or one a provider
// killed half way left, or an app whose Deployment someone deleted.
func (p *Provider) finish(ctx context.Context, id string, st appState) error {
	unlock := p.locks.Lock(id)
	defer unlock()
	if err := p.apply(ctx, Order{OrderID: st.orderID, InstanceID: id, Project: st.project, Spec: *st.spec}, false); err != nil {
		return err
	}
	p.log.InfoContext(ctx, "app applied", "instance_id", id, "namespace", Namespace(id), "image", st.spec.Image,
		"replicas", replicas(*st.spec))
	return nil
}

// apply writes the order's objects and notes the Deployment generation
// written; with prune (an update, a fix of drift) it also removes the
// objects its spec no longer asks for. The caller holds the instance's
// lock, and queues the instance once it lets go.
func (p *Provider) apply(ctx context.Context, o Order, prune bool) error {
	objs, err := Manifests(o)
	if err != nil {
		return err
	}
	stored, err := p.applier.Apply(ctx, objs)
	if err != nil {
		return err
	}
	for _, obj := range stored {
		if obj.GetKind() == "Deployment" {
			p.mu.Lock()
			p.applied[o.InstanceID] = obj.GetGeneration()
			p.mu.Unlock()
		}
	}
	if prune {
		return p.applier.Prune(ctx, o.InstanceID, objs)
	}
	return nil
}

// rollout corrects what the Deployment shows by what the provider
// applied: until the informers hold the generation its last apply wrote,
// the app is being applied; until it has had every replica ready since,
// it is rolling out (not degraded). A provider that applied nothing since
// it started takes the Deployment as it is.
func (p *Provider) rollout(instanceID string, d *appsv1.Deployment, o Observed) Observed {
	if d == nil {
		return o
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	applied := p.applied[instanceID]
	switch {
	case d.Generation < applied:
		return Observed{Status: StatusProvisioning, Message: "applying the spec", Desired: o.Desired, Ready: o.Ready}
	case o.Status == StatusRunning && !o.Degraded:
		p.settled[instanceID] = d.Generation
	case o.Degraded && applied > 0 && p.settled[instanceID] < applied:
		o.Status, o.Degraded = StatusProvisioning, false
		o.Message = cmp.Or(o.Blocked, fmt.Sprintf("rolling out: %d of %d replicas ready", o.Ready, o.Desired))
	}
	return o
}

// instance is the instance as the informers show it now.
func (p *Provider) instance(instanceID string) provider.Instance {
	st := p.watch.state(instanceID)
	return provider.Instance{InstanceID: instanceID, Status: provider.Status(st.observed.Status), Message: st.observed.Message,
		Outputs: st.outputs}
}

// Get answers the app's state from the informers: ErrNotFound when its
// namespace is not there.
func (p *Provider) Get(_ context.Context, instanceID string) (provider.Instance, error) {
	ns, err := p.watch.namespace(instanceID)
	if apierrors.IsNotFound(err) {
		return provider.Instance{}, provider.ErrNotFound
	}
	if err != nil {
		return provider.Instance{}, err
	}
	if ns.DeletionTimestamp != nil {
		return provider.Instance{InstanceID: instanceID, Status: provider.StatusDeleting,
			Message: "the namespace " + ns.Name + " is being deleted"}, nil
	}
	return p.instance(instanceID), nil
}

// Update applies the new spec in place and answers PROVISIONING: the
// Deployment rolls out, and the watch reports RUNNING when it has, FAILED
// when it cannot (ProgressDeadlineExceeded, an image that cannot be
// pulled, a crash loop). The spec the app has already changes nothing.
func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) (provider.Instance, error) {
	s, err := p.parseSpec(req.ServiceType, req.Spec)
	if err != nil {
		return provider.Instance{}, err
	}
	defer p.watch.enqueue(req.InstanceID)
	unlock := p.locks.Lock(req.InstanceID)
	defer unlock()
	ns, err := p.kube.CoreV1().Namespaces().Get(ctx, Namespace(req.InstanceID), metaGet)
	switch {
	case apierrors.IsNotFound(err):
		return provider.Instance{}, provider.ErrNotFound
	case err != nil:
		return provider.Instance{}, fmt.Errorf("kubeprovider: read namespace %s: %w", Namespace(req.InstanceID), err)
	case ns.DeletionTimestamp != nil:
		return provider.Instance{}, &provider.HTTPError{Code: http.StatusConflict, Reason: "INSTANCE_DELETING",
			Message: fmt.Sprintf("instance %s is being deleted", req.InstanceID)}
	}
	order := Order{OrderID: ns.Labels[LabelOrder], InstanceID: req.InstanceID, Project: ns.Annotations[annotationProject], Spec: s}
	if err := p.apply(ctx, order, true); err != nil {
		return provider.Instance{}, err
	}
	p.log.InfoContext(ctx, "app updated", "instance_id", req.InstanceID, "image", s.Image, "replicas", replicas(s))
	return p.instance(req.InstanceID), nil
}

// Delete deletes the app's namespace with foreground propagation and
// answers DELETING; the watch reports DELETED once the namespace is gone.
// An instance whose namespace is not there is ErrNotFound.
func (p *Provider) Delete(ctx context.Context, instanceID string) (provider.Instance, error) {
	if !instanceIDPattern.MatchString(instanceID) {
		return provider.Instance{}, provider.ErrNotFound
	}
	unlock := p.locks.Lock(instanceID)
	defer unlock()
	gone, err := p.applier.Gone(ctx, instanceID)
	if err != nil {
		return provider.Instance{}, err
	}
	if gone {
		return provider.Instance{}, provider.ErrNotFound
	}
	if err := p.applier.Delete(ctx, instanceID); err != nil {
		return provider.Instance{}, err
	}
	p.mu.Lock()
	delete(p.applied, instanceID)
	delete(p.settled, instanceID)
	p.mu.Unlock()
	p.log.InfoContext(ctx, "app deleting", "instance_id", instanceID, "namespace", Namespace(instanceID))
	return provider.Instance{InstanceID: instanceID, Status: provider.StatusDeleting,
		Message: "deleting namespace " + Namespace(instanceID)}, nil
}

// Health is nil while the API server answers its readiness check.
func (p *Provider) Health(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	body, err := p.kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("API server %s not ready: %w %s", p.Cluster(), err, body)
	}
	return nil
}
