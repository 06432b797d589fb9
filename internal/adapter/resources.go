package adapter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// applyResources is creation mode: every resource is server-side applied
// in declaration order, stopping at the first failure (a later resource
// may need an earlier one, such as a ConfigMap its namespace), then all are
// discovered for post.
func (r *run) applyResources(ctx context.Context) error {
	r.sit = sitApplied
	data := r.templateData()
	for _, rp := range r.e.prog.resources {
		obj, err := r.render(rp, data)
		if err != nil {
			r.fail(sitExecutionFailed, &stepError{phase: phaseResources, step: rp.name, err: err})
			break
		}
		if _, err := r.e.deps.Transport.Apply(ctx, obj, r.fieldManager()); err != nil {
			if isTransient(err) {
				return err
			}
			r.fail(sitApplyFailed, &stepError{phase: phaseResources, step: rp.name,
				err: fmt.Errorf("apply %s %s: %w", obj.GetKind(), objectName(obj.GetNamespace(), obj.GetName()), err)})
			break
		}
	}
	return r.discoverAll(ctx, true)
}

// fieldManager is the server-side apply field manager: one per adapter,
// so two adapters never fight over the same fields unnoticed.
func (r *run) fieldManager() string { return "steward-adapter-" + r.e.cfg.Adapter.Name }

// render renders a resource's manifest and marks it with the order id and
// the generation it was applied for.
func (r *run) render(rp resourceProg, data map[string]any) (*unstructured.Unstructured, error) {
	v, err := rp.manifest.render(data)
	if err != nil {
		return nil, fmt.Errorf("render manifest: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("manifest is not an object")
	}
	obj := &unstructured.Unstructured{Object: m}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelOrderID] = r.in.orderID
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationGeneration] = strconv.FormatInt(r.in.generation, 10)
	obj.SetAnnotations(annotations)
	return obj, nil
}

// discoverAll discovers every resource into r.found. When the resources
// phase ran (strict), a discovery that does not render is a failure: in
// deletion mode an undiscoverable resource would otherwise pass for
// deleted. After an earlier failure or a skip, such a resource is left out
// instead: a param it reads was never set, and that is already reported.
func (r *run) discoverAll(ctx context.Context, strict bool) error {
	data := r.templateData()
	for _, rp := range r.e.prog.resources {
		objs, err := r.discover(ctx, rp, data)
		var re *renderError
		switch {
		case errors.As(err, &re) && !strict:
			continue
		case err != nil && isTransient(err):
			return err
		case err != nil:
			r.fail(sitExecutionFailed, &stepError{phase: phaseResources, step: rp.name, err: fmt.Errorf("discover: %w", err)})
			continue
		}
		r.found[rp.name] = objs
	}
	return nil
}

// renderError is a discovery whose templates did not render.
type renderError struct{ err error }

func (e *renderError) Error() string { return "render discovery: " + e.err.Error() }
func (e *renderError) Unwrap() error { return e.err }

// discover finds a resource's objects: by name (none or one), or by labels
// (sorted by namespace and name, so resources.<name> is stable).
func (r *run) discover(ctx context.Context, rp resourceProg, data map[string]any) ([]unstructured.Unstructured, error) {
	ns, err := rp.namespace.render(data)
	if err != nil {
		return nil, &renderError{err}
	}
	if rp.selector == nil {
		name, err := rp.byName.render(data)
		if err != nil {
			return nil, &renderError{err}
		}
		obj, err := r.e.deps.Transport.Get(ctx, rp.gvk, ns, name)
		switch {
		case errors.Is(err, ErrNotFound):
			return []unstructured.Unstructured{}, nil
		case err != nil:
			return nil, err
		}
		return []unstructured.Unstructured{*obj}, nil
	}
	sel := make(map[string]string, len(rp.selector))
	for k, tt := range rp.selector {
		v, err := tt.render(data)
		if err != nil {
			return nil, &renderError{err}
		}
		sel[k] = v
	}
	objs, err := r.e.deps.Transport.List(ctx, rp.gvk, ns, sel)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(objs, func(a, b unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	if objs == nil {
		objs = []unstructured.Unstructured{}
	}
	return objs, nil
}

// anyFound reports whether any resource was discovered: Applied's status
// when the resources phase did not run to the end.
func (r *run) anyFound() bool {
	for _, objs := range r.found {
		if len(objs) > 0 {
			return true
		}
	}
	return false
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
