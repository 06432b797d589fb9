package adapter

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MemoryTransport is a [Transport] that keeps objects in memory: no
// Kubernetes at all. It is for measuring the adapter's own path (sentinel
// → event → executor → report) and for tests of what surrounds the
// executor; it has no garbage collection, finalizers or status.
type MemoryTransport struct {
	// Hook, when set, is called before each operation ("apply", "get",
	// "list", "delete") with the object's namespace and name; an error it
	// returns is the operation's (wrap [ErrTransient] for a retry).
	Hook func(op, namespace, name string) error

	mu   sync.Mutex
	objs map[memKey]*unstructured.Unstructured
}

type memKey struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

// NewMemoryTransport returns an empty MemoryTransport.
func NewMemoryTransport() *MemoryTransport {
	return &MemoryTransport{objs: map[memKey]*unstructured.Unstructured{}}
}

func (m *MemoryTransport) hook(op, namespace, name string) error {
	if m.Hook == nil {
		return nil
	}
	return m.Hook(op, namespace, name)
}

// Apply stores a copy of obj.
func (m *MemoryTransport) Apply(_ context.Context, obj *unstructured.Unstructured, _ string) (*unstructured.Unstructured, error) {
	if err := m.hook("apply", obj.GetNamespace(), obj.GetName()); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memKey{obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName()}
	m.objs[k] = obj.DeepCopy()
	return obj.DeepCopy(), nil
}

// Get returns a copy of the object, or an error wrapping ErrNotFound.
func (m *MemoryTransport) Get(_ context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	if err := m.hook("get", namespace, name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[memKey{gvk, namespace, name}]
	if !ok {
		return nil, fmt.Errorf("%s %s/%s: %w", gvk.Kind, namespace, name, ErrNotFound)
	}
	return o.DeepCopy(), nil
}

// List returns copies of the objects of gvk in namespace (all when empty)
// whose labels include labelSelector.
func (m *MemoryTransport) List(_ context.Context, gvk schema.GroupVersionKind, namespace string, labelSelector map[string]string) ([]unstructured.Unstructured, error) {
	if err := m.hook("list", namespace, ""); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []unstructured.Unstructured
	for k, o := range m.objs {
		if k.gvk != gvk || (namespace != "" && k.namespace != namespace) || !hasLabels(o.GetLabels(), labelSelector) {
			continue
		}
		out = append(out, *o.DeepCopy())
	}
	return out, nil
}

// Delete removes the object; a missing one is no error.
func (m *MemoryTransport) Delete(_ context.Context, gvk schema.GroupVersionKind, namespace, name string, _ metav1.DeletionPropagation) error {
	if err := m.hook("delete", namespace, name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, memKey{gvk, namespace, name})
	return nil
}

// Len is how many objects it holds.
func (m *MemoryTransport) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.objs)
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
