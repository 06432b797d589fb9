package adapter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Client-side rate limits when the rest.Config sets none: client-go's
// default (5/s, burst 10) would throttle a deletion pass over many objects.
const (
	defaultQPS   = 50
	defaultBurst = 100
)

// errKindNotServed is a kind the API server does not serve. Get, List and
// Delete treat it as "nothing there" (an uninstalled CRD has no objects
// left to delete); Apply fails with it, terminally.
var errKindNotServed = errors.New("kind not served by the API server")

// KubernetesTransport is the [Transport] over a real Kubernetes API
// server: client-go's dynamic client, with REST mappings from discovery.
// It is safe for concurrent use.
type KubernetesTransport struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// NewKubernetesTransport connects to the API server of cfg (it does not
// call it yet). Discovery is cached in memory and refreshed once when a
// kind is not found, so a CRD installed after start is found.
func NewKubernetesTransport(cfg *rest.Config) (*KubernetesTransport, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = defaultQPS, defaultBurst
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "steward-adapter"
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes dynamic client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes discovery client: %w", err)
	}
	return &KubernetesTransport{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

// KubeconfigTransport is [NewKubernetesTransport] for the current context
// of the kubeconfig file at path; an empty path means the in-cluster
// config (the pod's service account).
func KubeconfigTransport(path string) (*KubernetesTransport, error) {
	var cfg *rest.Config
	var err error
	if path == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", path)
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes config: %w", err)
	}
	return NewKubernetesTransport(cfg)
}

// Apply server-side applies obj, forcing conflicts: the adapter owns the
// fields its manifest sets.
func (t *KubernetesTransport) Apply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	ri, err := t.resource(obj.GroupVersionKind(), obj.GetNamespace(), true)
	if err != nil {
		return nil, err
	}
	out, err := ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	return out, classify(err)
}

// Get returns the object, or an error wrapping [ErrNotFound].
func (t *KubernetesTransport) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	ri, err := t.resource(gvk, namespace, true)
	if errors.Is(err, errKindNotServed) {
		return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	return obj, classify(err)
}

// List returns the objects matching labelSelector; an empty namespace
// lists every namespace.
func (t *KubernetesTransport) List(ctx context.Context, gvk schema.GroupVersionKind, namespace string, labelSelector map[string]string) ([]unstructured.Unstructured, error) {
	ri, err := t.resource(gvk, namespace, false)
	if errors.Is(err, errKindNotServed) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labelSelector).String()})
	if err != nil {
		return nil, classify(err)
	}
	return list.Items, nil
}

// Delete deletes the object with policy (none when empty: the server's
// default); an object already gone is not an error.
func (t *KubernetesTransport) Delete(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, policy metav1.DeletionPropagation) error {
	ri, err := t.resource(gvk, namespace, true)
	if errors.Is(err, errKindNotServed) {
		return nil
	}
	if err != nil {
		return err
	}
	opts := metav1.DeleteOptions{}
	if policy != "" {
		opts.PropagationPolicy = &policy
	}
	err = classify(ri.Delete(ctx, name, opts))
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// resource maps gvk to its REST resource, rediscovering once on a miss.
// needNamespace makes a namespaced kind without a namespace an error;
// List passes false to list every namespace.
func (t *KubernetesTransport) resource(gvk schema.GroupVersionKind, namespace string, needNamespace bool) (dynamic.ResourceInterface, error) {
	m, err := t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		t.mapper.Reset()
		m, err = t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	switch {
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("%s: %w", gvk, errKindNotServed)
	case err != nil:
		return nil, fmt.Errorf("map %s: %w", gvk, classify(err))
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return t.dyn.Resource(m.Resource), nil
	}
	if namespace == "" {
		if needNamespace {
			return nil, fmt.Errorf("%s is namespaced: set metadata.namespace", gvk.Kind)
		}
		return t.dyn.Resource(m.Resource), nil
	}
	return t.dyn.Resource(m.Resource).Namespace(namespace), nil
}

// classify sorts a client-go error: NotFound wraps [ErrNotFound]; what
// may pass (5xx, 429, timeouts, no connection) is [Transient]; any other
// answer (a 4xx: invalid, forbidden, conflict) is terminal as it is.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if status, ok := err.(apierrors.APIStatus); ok || errors.As(err, &status) {
		code := status.Status().Code
		if code >= 500 || code == 429 || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
			apierrors.IsTooManyRequests(err) || apierrors.IsUnexpectedServerError(err) {
			return Transient(err)
		}
		return err
	}
	var netErr net.Error
	var urlErr *url.Error
	if errors.As(err, &netErr) || errors.As(err, &urlErr) || utilnet.IsConnectionRefused(err) ||
		utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) {
		return Transient(err)
	}
	return err
}
