package adapter

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Transport reaches the Kubernetes API (or a fake in unit tests).
// [KubernetesTransport] is the real one.
//
// Every method must be safe for concurrent use and idempotent, because a
// redelivered event repeats the calls. Errors worth retrying (the API
// unreachable, timing out, 5xx, 429) must satisfy errors.Is(err,
// [ErrTransient]) (wrap them with [Transient]); any other error is taken
// as terminal and reported on the order.
type Transport interface {
	// Apply server-side applies obj with fieldManager, forcing ownership
	// of conflicting fields, and returns the object as stored.
	Apply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error)
	// Get returns the object, or an error wrapping [ErrNotFound] when it
	// does not exist (also when its kind is not served).
	Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
	// List returns the objects of gvk in namespace (every namespace when
	// empty) whose labels include labelSelector; none when the kind is
	// not served.
	List(ctx context.Context, gvk schema.GroupVersionKind, namespace string, labelSelector map[string]string) ([]unstructured.Unstructured, error)
	// Delete deletes the object with exactly this propagation policy. An
	// object already gone (or a kind not served) is not an error: Delete
	// returns nil.
	Delete(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, policy metav1.DeletionPropagation) error
}

// API reaches the Steward API. [HTTPAPI] is the real one.
//
// Do sends one request to path (relative to the API's base URL, starting
// with /) and returns the status and body of whatever answer came back,
// 4xx and 5xx included; err is only for a request that got no answer
// (connection refused, timeout, cancelled ctx), which the executor retries.
// It must be safe for concurrent use.
type API interface {
	Do(ctx context.Context, method, path string, body []byte) (status int, respBody []byte, err error)
}
