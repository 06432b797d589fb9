package kubeprovider

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// FieldManager is the server-side apply field manager of every object the
// provider writes: what it owns, and what drift is measured against.
const FieldManager = "steward-kubernetes-provider"

// resources maps the kinds Manifests makes to their API resources.
var resources = map[string]schema.GroupVersionResource{
	"Namespace":     {Version: "v1", Resource: "namespaces"},
	"Deployment":    {Group: "apps", Version: "v1", Resource: "deployments"},
	"Service":       {Version: "v1", Resource: "services"},
	"ResourceQuota": {Version: "v1", Resource: "resourcequotas"},
	"LimitRange":    {Version: "v1", Resource: "limitranges"},
	"NetworkPolicy": {Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
}

// Applier writes an order's objects to one cluster.
type Applier struct {
	Dynamic dynamic.Interface
}

// Apply writes objs, in order, with server-side apply as FieldManager,
// forcing conflicts (the provider owns what it manages): applying the same
// objects again changes nothing. It returns the objects as the cluster
// stored them.
func (a Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		gvr, ok := resources[obj.GetKind()]
		if !ok {
			return out, fmt.Errorf("kubeprovider: no resource for kind %s", obj.GetKind())
		}
		var ri dynamic.ResourceInterface = a.Dynamic.Resource(gvr)
		if ns := obj.GetNamespace(); ns != "" {
			ri = a.Dynamic.Resource(gvr).Namespace(ns)
		}
		stored, err := ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		if err != nil {
			return out, fmt.Errorf("kubeprovider: apply %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		out = append(out, stored)
	}
	return out, nil
}

// Delete asks for the instance's namespace to be deleted with foreground
// propagation (its objects go first); a namespace already gone is no
// error. Gone says when it has.
func (a Applier) Delete(ctx context.Context, instanceID string) error {
	fg := metav1.DeletePropagationForeground
	err := a.Dynamic.Resource(resources["Namespace"]).Delete(ctx, Namespace(instanceID), metav1.DeleteOptions{PropagationPolicy: &fg})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("kubeprovider: delete namespace %s: %w", Namespace(instanceID), err)
	}
	return nil
}

// Gone reports whether the instance's namespace no longer exists.
func (a Applier) Gone(ctx context.Context, instanceID string) (bool, error) {
	_, err := a.Dynamic.Resource(resources["Namespace"]).Get(ctx, Namespace(instanceID), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("kubeprovider: read namespace %s: %w", Namespace(instanceID), err)
	}
	return false, nil
}

// optionalKinds are the kinds an order has only when its spec asks for
// them: a Service (exposed ports), a ResourceQuota and a LimitRange
// (resources).
var optionalKinds = []string{"Service", "ResourceQuota", "LimitRange"}

// Prune deletes the instance's objects of the optional kinds that objs no
// longer holds (an update that removed the resources): server-side apply
// only writes what it is given.
func (a Applier) Prune(ctx context.Context, instanceID string, objs []*unstructured.Unstructured) error {
	keep := map[string]bool{}
	for _, o := range objs {
		keep[o.GetKind()+"/"+o.GetName()] = true
	}
	ns := Namespace(instanceID)
	for _, kind := range optionalKinds {
		list, err := a.Dynamic.Resource(resources[kind]).Namespace(ns).List(ctx,
			metav1.ListOptions{LabelSelector: LabelInstance + "=" + instanceID})
		if err != nil {
			return fmt.Errorf("kubeprovider: list %s in %s: %w", kind, ns, err)
		}
		for _, o := range list.Items {
			if keep[kind+"/"+o.GetName()] {
				continue
			}
			err := a.Dynamic.Resource(resources[kind]).Namespace(ns).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("kubeprovider: delete %s %s/%s: %w", kind, ns, o.GetName(), err)
			}
		}
	}
	return nil
}
