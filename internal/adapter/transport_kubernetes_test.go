package adapter

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// fakeAPIServer is just enough of a Kubernetes API server for the
// transport: discovery of core v1 (configmaps, namespaces) and, once
// served, example.com/v1 widgets; then answers chosen per request path.
type fakeAPIServer struct {
	srv *httptest.Server

	mu       sync.Mutex
	widgets  bool              // whether example.com/v1 is served
	answers  map[string]int    // "METHOD path" → status
	requests []recordedRequest // what reached the resource endpoints
}

type recordedRequest struct {
	method, path, query, contentType, body string
}

func newFakeAPIServer(t *testing.T) *fakeAPIServer {
	t.Helper()
	f := &fakeAPIServer{answers: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPIServer) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	write := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	switch r.URL.Path {
	case "/api":
		write(map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
		return
	case "/apis":
		groups := []any{}
		if f.widgets {
			gv := map[string]any{"groupVersion": "example.com/v1", "version": "v1"}
			groups = append(groups, map[string]any{"name": "example.com", "versions": []any{gv}, "preferredVersion": gv})
		}
		write(map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
		return
	case "/api/v1":
		write(map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": []any{
			map[string]any{"name": "configmaps", "singularName": "configmap", "namespaced": true, "kind": "ConfigMap", "verbs": []string{"get", "list", "patch", "delete"}},
			map[string]any{"name": "namespaces", "singularName": "namespace", "namespaced": false, "kind": "Namespace", "verbs": []string{"get", "list", "patch", "delete"}},
		}})
		return
	case "/apis/example.com/v1":
		if f.widgets {
			write(map[string]any{"kind": "APIResourceList", "groupVersion": "example.com/v1", "resources": []any{
				map[string]any{"name": "widgets", "singularName": "widget", "namespaced": true, "kind": "Widget", "verbs": []string{"get", "list", "patch", "delete"}},
			}})
			return
		}
	}
	body, _ := io.ReadAll(r.Body)
	f.requests = append(f.requests, recordedRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), string(body)})
	status, ok := f.answers[r.Method+" "+r.URL.Path]
	if !ok {
		status = http.StatusOK
	}
	if status != http.StatusOK {
		w.WriteHeader(status)
		write(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": status,
			"reason":  map[int]string{404: "NotFound", 403: "Forbidden", 422: "Invalid", 500: "InternalError", 429: "TooManyRequests"}[status],
			"message": "forced " + http.StatusText(status)})
		return
	}
	name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/configmaps") {
		write(map[string]any{"kind": "ConfigMapList", "apiVersion": "v1", "metadata": map[string]any{},
			"items": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "listed", "namespace": "ns"}}}})
		return
	}
	write(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "ns"}})
}

func (f *fakeAPIServer) answer(method, path string, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[method+" "+path] = status
}

func (f *fakeAPIServer) lastRequest() recordedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		return recordedRequest{}
	}
	return f.requests[len(f.requests)-1]
}

func newTestTransport(t *testing.T, f *fakeAPIServer) *KubernetesTransport {
	t.Helper()
	tr, err := NewKubernetesTransport(&rest.Config{Host: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

func TestKubernetesTransport_ClassifiesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status        int
		wantNotFound  bool
		wantTransient bool
	}{
		{http.StatusOK, false, false},
		{http.StatusNotFound, true, false},
		{http.StatusInternalServerError, false, true},
		{http.StatusTooManyRequests, false, true},
		{http.StatusForbidden, false, false},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			t.Parallel()
			f := newFakeAPIServer(t)
			tr := newTestTransport(t, f)
			f.answer("GET", "/api/v1/namespaces/ns/configmaps/c", tt.status)
			obj, err := tr.Get(t.Context(), configMapGVK, "ns", "c")
			if tt.status == http.StatusOK {
				if err != nil || obj.GetName() != "c" {
					t.Fatalf("Get = %v, %v", obj, err)
				}
				return
			}
			if err == nil || errors.Is(err, ErrNotFound) != tt.wantNotFound || isTransient(err) != tt.wantTransient {
				t.Errorf("Get = %v: not found %v (want %v), transient %v (want %v)", err,
					errors.Is(err, ErrNotFound), tt.wantNotFound, isTransient(err), tt.wantTransient)
			}
		})
	}
}

func TestKubernetesTransport_AnUnreachableServerIsTransient(t *testing.T) {
	t.Parallel()
	f := newFakeAPIServer(t)
	tr := newTestTransport(t, f)
	f.srv.Close()
	_, err := tr.Get(t.Context(), configMapGVK, "ns", "c")
	if !isTransient(err) {
		t.Errorf("Get from a closed server = %v, want transient", err)
	}
}

func TestKubernetesTransport_ApplyIsForcedServerSideApply(t *testing.T) {
	t.Parallel()
	f := newFakeAPIServer(t)
	tr := newTestTransport(t, f)
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "ns"}}}
	if _, err := tr.Apply(t.Context(), obj, "steward-adapter-x"); err != nil {
		t.Fatal(err)
	}
	req := f.lastRequest()
	if req.method != http.MethodPatch || req.path != "/api/v1/namespaces/ns/configmaps/c" ||
		req.contentType != "application/apply-patch+yaml" ||
		!containsAll(req.query, "fieldManager=steward-adapter-x", "force=true") {
		t.Errorf("apply request = %+v", req)
	}

	f.answer("PATCH", "/api/v1/namespaces/ns/configmaps/c", http.StatusUnprocessableEntity)
	if _, err := tr.Apply(t.Context(), obj, "m"); err == nil || isTransient(err) {
		t.Errorf("Apply of an invalid object = %v, want a terminal error", err)
	}
	obj.SetNamespace("")
	if _, err := tr.Apply(t.Context(), obj, "m"); err == nil || !strings.Contains(err.Error(), "namespaced") {
		t.Errorf("Apply of a namespaced kind without a namespace = %v", err)
	}
}

func TestKubernetesTransport_DeleteSendsThePolicyAndToleratesNotFound(t *testing.T) {
	t.Parallel()
	f := newFakeAPIServer(t)
	tr := newTestTransport(t, f)
	for _, p := range []metav1.DeletionPropagation{metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan} {
		if err := tr.Delete(t.Context(), configMapGVK, "ns", "c", p); err != nil {
			t.Fatal(err)
		}
		if req := f.lastRequest(); req.method != http.MethodDelete || !strings.Contains(req.body, `"propagationPolicy":"`+string(p)+`"`) {
			t.Errorf("delete request = %+v, want propagationPolicy %s", req, p)
		}
	}
	f.answer("DELETE", "/api/v1/namespaces/ns/configmaps/c", http.StatusNotFound)
	if err := tr.Delete(t.Context(), configMapGVK, "ns", "c", metav1.DeletePropagationBackground); err != nil {
		t.Errorf("Delete of a missing object = %v, want nil", err)
	}
}

func TestKubernetesTransport_ListsByLabels(t *testing.T) {
	t.Parallel()
	f := newFakeAPIServer(t)
	tr := newTestTransport(t, f)
	objs, err := tr.List(t.Context(), configMapGVK, "ns", map[string]string{"steward.dev/order-id": "o1"})
	if err != nil || len(objs) != 1 || objs[0].GetName() != "listed" {
		t.Fatalf("List = %v, %v", objs, err)
	}
	if req := f.lastRequest(); !strings.Contains(req.query, "labelSelector=steward.dev%2Forder-id%3Do1") {
		t.Errorf("list query = %s", req.query)
	}
}

func TestKubernetesTransport_AKindNotServedIsNothingThereUntilItIs(t *testing.T) {
	t.Parallel()
	f := newFakeAPIServer(t)
	tr := newTestTransport(t, f)
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	if _, err := tr.Get(t.Context(), widget, "ns", "w"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of an unserved kind = %v, want ErrNotFound", err)
	}
	if err := tr.Delete(t.Context(), widget, "ns", "w", ""); err != nil {
		t.Errorf("Delete of an unserved kind = %v, want nil: nothing is left to delete", err)
	}
	if objs, err := tr.List(t.Context(), widget, "ns", nil); err != nil || len(objs) != 0 {
		t.Errorf("List of an unserved kind = %v, %v", objs, err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns"}}}
	if _, err := tr.Apply(t.Context(), obj, "m"); err == nil || isTransient(err) {
		t.Errorf("Apply of an unserved kind = %v, want a terminal error", err)
	}

	// The CRD is installed: the cached discovery is refreshed on the miss.
	f.mu.Lock()
	f.widgets = true
	f.mu.Unlock()
	if _, err := tr.Get(t.Context(), widget, "ns", "w"); err != nil {
		t.Errorf("Get after the kind is served = %v", err)
	}
	if req := f.lastRequest(); req.path != "/apis/example.com/v1/namespaces/ns/widgets/w" {
		t.Errorf("request path = %s", req.path)
	}
}

func TestKubeconfigTransport_ReadsTheFile(t *testing.T) {
	t.Parallel()
	if _, err := KubeconfigTransport(t.TempDir() + "/missing"); err == nil {
		t.Error("KubeconfigTransport of a missing file succeeded")
	}
}
