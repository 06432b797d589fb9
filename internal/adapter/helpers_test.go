package adapter

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// testLogger sends logs to t.Log.
func testLogger(t testing.TB) *slog.Logger {
	t.Helper()
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// fakeTransport is an in-memory Kubernetes: objects by kind, namespace and
// name; an object with finalizers survives its delete with a
// deletionTimestamp until release() clears them, as on a real server.
type fakeTransport struct {
	mu      sync.Mutex
	objs    map[objKey]*unstructured.Unstructured
	calls   []string // "apply Kind ns/name", "delete Kind ns/name Policy"
	uid     int
	errs    map[string]error // "op name" → error for that call
	onApply func(obj *unstructured.Unstructured)
}

type objKey struct {
	kind, namespace, name string
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{objs: map[objKey]*unstructured.Unstructured{}, errs: map[string]error{}}
}

func keyOf(gvk schema.GroupVersionKind, ns, name string) objKey { return objKey{gvk.Kind, ns, name} }

// failOn makes op ("apply", "get", "list", "delete") on name fail with err.
func (f *fakeTransport) failOn(op, name string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[op+" "+name] = err
}

func (f *fakeTransport) err(op, name string) error {
	return f.errs[op+" "+name]
}

func (f *fakeTransport) Apply(_ context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.err("apply", obj.GetName()); err != nil {
		return nil, err
	}
	if fieldManager == "" {
		return nil, fmt.Errorf("no field manager")
	}
	f.calls = append(f.calls, fmt.Sprintf("apply %s %s", obj.GetKind(), objectName(obj.GetNamespace(), obj.GetName())))
	k := keyOf(obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())
	c := obj.DeepCopy()
	if old, ok := f.objs[k]; ok {
		c.SetUID(old.GetUID())
		c.SetFinalizers(old.GetFinalizers())
		c.SetDeletionTimestamp(old.GetDeletionTimestamp())
	} else {
		f.uid++
		c.SetUID(types.UID(fmt.Sprintf("uid-%d", f.uid)))
	}
	if f.onApply != nil {
		f.onApply(c)
	}
	f.objs[k] = c
	return c.DeepCopy(), nil
}

func (f *fakeTransport) Get(_ context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.err("get", name); err != nil {
		return nil, err
	}
	o, ok := f.objs[keyOf(gvk, ns, name)]
	if !ok {
		return nil, fmt.Errorf("%s %s: %w", gvk.Kind, name, ErrNotFound)
	}
	return o.DeepCopy(), nil
}

func (f *fakeTransport) List(_ context.Context, gvk schema.GroupVersionKind, ns string, sel map[string]string) ([]unstructured.Unstructured, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []unstructured.Unstructured
	for k, o := range f.objs {
		if k.kind != gvk.Kind || (ns != "" && k.namespace != ns) {
			continue
		}
		if err := f.err("list", o.GetName()); err != nil {
			return nil, err
		}
		match := true
		for lk, lv := range sel {
			match = match && o.GetLabels()[lk] == lv
		}
		if match {
			out = append(out, *o.DeepCopy())
		}
	}
	return out, nil
}

func (f *fakeTransport) Delete(_ context.Context, gvk schema.GroupVersionKind, ns, name string, policy metav1.DeletionPropagation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.err("delete", name); err != nil {
		return err
	}
	f.calls = append(f.calls, fmt.Sprintf("delete %s %s %s", gvk.Kind, objectName(ns, name), policy))
	k := keyOf(gvk, ns, name)
	o, ok := f.objs[k]
	if !ok {
		return nil
	}
	if len(o.GetFinalizers()) > 0 {
		if o.GetDeletionTimestamp() == nil {
			now := metav1.NewTime(time.Unix(1700000000, 0))
			o.SetDeletionTimestamp(&now)
		}
		return nil
	}
	delete(f.objs, k)
	return nil
}

// put stores an object as if someone else had created it.
func (f *fakeTransport) put(obj map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := &unstructured.Unstructured{Object: obj}
	f.uid++
	u.SetUID(types.UID(fmt.Sprintf("uid-%d", f.uid)))
	f.objs[keyOf(u.GroupVersionKind(), u.GetNamespace(), u.GetName())] = u
}

// release clears the finalizers of an object, which then goes if it was
// being deleted: what a controller finishing its cleanup does.
func (f *fakeTransport) release(kind, ns, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := objKey{kind, ns, name}
	o, ok := f.objs[k]
	if !ok {
		return
	}
	o.SetFinalizers(nil)
	if o.GetDeletionTimestamp() != nil {
		delete(f.objs, k)
	}
}

// setFinalizers gives an existing object finalizers.
func (f *fakeTransport) setFinalizers(kind, ns, name string, finalizers ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objs[objKey{kind, ns, name}].SetFinalizers(finalizers)
}

func (f *fakeTransport) has(kind, ns, name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.objs[objKey{kind, ns, name}]
	return ok
}

func (f *fakeTransport) object(kind, ns, name string) *unstructured.Unstructured {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.objs[objKey{kind, ns, name}].DeepCopy()
}

// takeCalls returns the calls so far and forgets them.
func (f *fakeTransport) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

// fakeSteward is the Steward API as an adapter sees it: orders by id, and
// the reports PUT on them.
type fakeSteward struct {
	srv *httptest.Server

	mu      sync.Mutex
	orders  map[string]map[string]any
	status  map[string]int // path → forced answer status
	reports map[string][]json.RawMessage
	auth    []string // Authorization headers seen
}

func newFakeSteward(t testing.TB) *fakeSteward {
	t.Helper()
	s := &fakeSteward{orders: map[string]map[string]any{}, status: map[string]int{}, reports: map[string][]json.RawMessage{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *fakeSteward) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	if code, ok := s.status[r.URL.Path]; ok {
		http.Error(w, `{"reason":"FORCED"}`, code)
		return
	}
	const prefix = "/api/v1/catalog-item-instances/"
	rest, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	id, adapter, isReport := strings.Cut(rest, "/adapter-statuses/")
	order, exists := s.orders[id]
	switch {
	case !exists:
		http.Error(w, `{"reason":"NOT_FOUND"}`, http.StatusNotFound)
	case isReport && r.Method == http.MethodPut:
		var body json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.reports[id+"/"+adapter] = append(s.reports[id+"/"+adapter], body)
		w.WriteHeader(http.StatusOK)
	case !isReport && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(order)
	default:
		http.Error(w, "method", http.StatusMethodNotAllowed)
	}
}

func (s *fakeSteward) setOrder(id string, order map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orders[id] = order
}

func (s *fakeSteward) force(path string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if code == 0 {
		delete(s.status, path)
		return
	}
	s.status[path] = code
}

func (s *fakeSteward) api() *HTTPAPI { return &HTTPAPI{BaseURL: s.srv.URL, Client: s.srv.Client()} }

// bundle is one test's executor with its fakes.
type bundle struct {
	exec    *Executor
	kube    *fakeTransport
	steward *fakeSteward
	env     map[string]string
	now     time.Time
}

var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// setup parses yamlText and builds an executor over fresh fakes.
func setup(t testing.TB, yamlText string) *bundle {
	t.Helper()
	cfg, err := Parse([]byte(yamlText))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return setupConfig(t, cfg)
}

// setupConfig builds an executor for a config built in Go.
func setupConfig(t testing.TB, cfg *Config) *bundle {
	t.Helper()
	b := &bundle{kube: newFakeTransport(), steward: newFakeSteward(t), env: map[string]string{}, now: testNow}
	exec, err := NewExecutor(cfg, Deps{
		Transport: b.kube,
		API:       b.steward.api(),
		Env: func(k string) (string, bool) {
			v, ok := b.env[k]
			return v, ok
		},
		Now:    func() time.Time { return b.now },
		Logger: testLogger(t),
	})
	if err != nil {
		t.Fatalf("NewExecutor: %v", err)
	}
	b.exec = exec
	return b
}

// order is a catalog-item-instance as the API answers it.
func order(id string, generation int64, state string, deleted bool) map[string]any {
	o := map[string]any{
		"id": id, "path": "catalog-item-instances/" + id, "service_type": "cluster", "project": "default",
		"display_name": "Cluster " + id, "state": state, "generation": generation,
		"user_values": []any{map[string]any{"path": "nodes", "value": 3}},
		"deleted_at":  nil,
	}
	if deleted {
		o["deleted_at"] = "2026-05-01T11:00:00Z"
	}
	return o
}

// event is the sentinel's reconcile event for an order.
func event(id string, generation int64, deleted bool) Event {
	data := map[string]any{
		"id": id, "kind": "catalog-item-instance", "href": "/api/v1/catalog-item-instances/" + id,
		"project": "default", "service_type": "cluster", "generation": float64(generation),
		"deleted_at": nil, "reason": "new",
	}
	if deleted {
		data["deleted_at"], data["reason"] = "2026-05-01T11:00:00Z", "deleting"
	}
	return Event{ID: fmt.Sprintf("ev-%s-%d", id, generation), Type: "steward.reconcile.cluster", Data: data}
}

// execute runs one event and fails the test on an Execute error.
func (b *bundle) execute(t testing.TB, ev Event) Outcome {
	t.Helper()
	out, err := b.exec.Execute(t.Context(), ev)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return out
}

// cond returns a report's condition as "Status Reason", or "" when absent.
func cond(t testing.TB, o Outcome, typ string) string {
	t.Helper()
	if o.Report == nil {
		t.Fatalf("no report (retry: %v)", o.Retry)
	}
	c, ok := o.Report.Condition(typ)
	if !ok {
		return ""
	}
	return c.Status + " " + c.Reason
}

// message returns a report's condition message.
func message(t testing.TB, o Outcome, typ string) string {
	t.Helper()
	if o.Report == nil {
		t.Fatalf("no report (retry: %v)", o.Retry)
	}
	c, _ := o.Report.Condition(typ)
	return c.Message
}

// deletes filters the delete calls out of calls.
func deletes(calls []string) []string {
	var out []string
	for _, c := range calls {
		if strings.HasPrefix(c, "delete ") {
			out = append(out, c)
		}
	}
	return out
}

func containsAll(s string, parts ...string) bool {
	return !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(s, p) })
}
