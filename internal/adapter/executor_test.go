package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// clusterConfig is the config most executor tests run: a namespace that
// goes last (Foreground, after the rest), a ConfigMap, a Secret found by
// label (Orphan) and a retained record.
const clusterConfig = `
adapter: {name: test-adapter}
service_types: [cluster]
params:
  - {name: orderId, source: event.id, required: true}
  - {name: href, source: event.href, required: true}
  - {name: order, source: {api_call: {url: "{{ .href }}"}}}
  - {name: prefix, source: env.NS_PREFIX, default: steward}
  - {name: ns, source: {expression: "prefix + '-' + orderId"}}
  - {name: isDeleting, source: {expression: "has(order.deleted_at) && order.deleted_at != null"}}
preconditions:
  - name: placed
    api_call: {url: "/api/v1/catalog-item-instances/{{ .orderId }}"}
    capture:
      - {name: state, field: state}
      - {name: gen, expression: "generation"}
    conditions:
      - {field: state, operator: in, values: [up, creating, deleting, failed]}
    expression: "gen > 0"
when_deleting: isDeleting
resources:
  - name: namespace
    manifest: {apiVersion: v1, kind: Namespace, metadata: {name: "{{ .ns }}"}}
    discovery: {by_name: "{{ .ns }}"}
    delete_options: {propagation_policy: Foreground, after: [config, secret]}
  - name: config
    manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: cfg, namespace: "{{ .ns }}"}
      data: {order: "{{ .orderId }}", state: "{{ .state }}", nodes: "{{ (index .order.user_values 0).value }}"}
    discovery: {namespace: "{{ .ns }}", by_name: cfg}
  - name: secret
    manifest: {apiVersion: v1, kind: Secret, metadata: {name: creds, namespace: "{{ .ns }}"}, stringData: {a: b}}
    discovery: {namespace: "{{ .ns }}", by_selectors: {label_selector: {steward.dev/order-id: "{{ .orderId }}"}}}
    delete_options: {propagation_policy: Orphan}
  - name: record
    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: "rec-{{ .orderId }}", namespace: default}}
    discovery: {namespace: default, by_name: "rec-{{ .orderId }}"}
    delete_options: {retain: true}
`

func TestExecute_CreationAppliesEveryResourceAndReports(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig)
	b.env["NS_PREFIX"] = "team"
	b.steward.setOrder("o1", order("o1", 3, "creating", false))

	out := b.execute(t, event("o1", 3, false))

	want := []string{"apply Namespace team-o1", "apply ConfigMap team-o1/cfg", "apply Secret team-o1/creds", "apply ConfigMap default/rec-o1"}
	if diff := cmp.Diff(want, b.kube.takeCalls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if out.Retry != nil || out.Mode != ModeCreate || out.OrderID != "o1" || out.Project != "default" || out.Generation != 3 {
		t.Fatalf("outcome = %+v", out)
	}
	for typ, want := range map[string]string{
		ConditionApplied: "True AppliedSuccessfully", ConditionAvailable: "True ResourcesCreated",
		ConditionHealth: "True Healthy", ConditionFinalized: "",
	} {
		if got := cond(t, out, typ); got != want {
			t.Errorf("%s = %q, want %q", typ, got, want)
		}
	}
	if out.Report.ObservedGeneration != 3 || !out.Report.ObservedTime.Equal(testNow) || string(out.Report.Data) != "{}" {
		t.Errorf("report = gen %d, time %v, data %s", out.Report.ObservedGeneration, out.Report.ObservedTime, out.Report.Data)
	}
	cm := b.kube.object("ConfigMap", "team-o1", "cfg")
	data, _ := cm.Object["data"].(map[string]any)
	if !cmp.Equal(data, map[string]any{"order": "o1", "state": "creating", "nodes": "3"}) {
		t.Errorf("configmap data = %v: every string leaf is a template over params and captures", data)
	}
	if cm.GetLabels()[LabelOrderID] != "o1" || cm.GetAnnotations()[AnnotationGeneration] != "3" {
		t.Errorf("labels %v, annotations %v: want the order id and generation", cm.GetLabels(), cm.GetAnnotations())
	}
}

func TestExecute_ApplyUsesTheAdaptersFieldManager(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig)
	b.steward.setOrder("o1", order("o1", 1, "creating", false))
	rec := &recordingTransport{Transport: b.kube}
	b.exec.deps.Transport = rec
	b.execute(t, event("o1", 1, false))
	if len(rec.managers) == 0 || rec.managers[0] != "steward-adapter-test-adapter" {
		t.Errorf("field managers = %v, want steward-adapter-test-adapter", rec.managers)
	}
}

func TestExecute_PreconditionsNotMet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		existing    bool
		wantApplied string
		reason      string
	}{
		{name: "nothing exists", wantApplied: "False PreconditionsNotMet", reason: "Applied says whether anything exists"},
		{name: "a resource exists", existing: true, wantApplied: "True PreconditionsNotMet", reason: "Applied says whether anything exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, clusterConfig)
			b.steward.setOrder("o1", order("o1", 1, "start", false))
			if tt.existing {
				b.kube.put(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "steward-o1"}})
			}
			out := b.execute(t, event("o1", 1, false))
			if calls := b.kube.takeCalls(); len(calls) != 0 {
				t.Errorf("calls = %v, want none: the resources phase is skipped", calls)
			}
			if got := cond(t, out, ConditionApplied); got != tt.wantApplied {
				t.Errorf("Applied = %q, want %q\nreason: %s", got, tt.wantApplied, tt.reason)
			}
			if got := cond(t, out, ConditionAvailable); got != "False PreconditionsNotMet" {
				t.Errorf("Available = %q", got)
			}
			if got := cond(t, out, ConditionHealth); got != "True Healthy" {
				t.Errorf("Health = %q: not meeting a precondition is not a failure", got)
			}
			if msg := message(t, out, ConditionAvailable); !containsAll(msg, "placed", `state is "start"`, "in") {
				t.Errorf("Available message %q should say which precondition and why", msg)
			}
		})
	}
}

func TestExecute_OrderGoneMeansNoReport(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig) // no order in the fake API: 404
	out := b.execute(t, event("o1", 4, true))
	if out.Report != nil || out.Retry != nil {
		t.Fatalf("outcome = %+v, want neither report nor retry", out)
	}
	if calls := b.kube.takeCalls(); len(calls) != 0 {
		t.Errorf("calls = %v, want none", calls)
	}
	if err := b.exec.PutReport(t.Context(), out); err != nil {
		t.Errorf("PutReport of a gone order = %v, want nil (nothing to send)", err)
	}
}

func TestExecute_ANotFoundThatIsNotTheOrderIsAFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, strings.Replace(clusterConfig, `url: "/api/v1/catalog-item-instances/{{ .orderId }}"`,
		`url: "/api/v1/catalog-items/{{ .orderId }}"`, 1))
	b.steward.setOrder("o1", order("o1", 1, "up", false))
	out := b.execute(t, event("o1", 1, false))
	if got := cond(t, out, ConditionHealth); got != "False ExecutionFailed" {
		t.Fatalf("Health = %q, want False ExecutionFailed: a 404 elsewhere is a broken config", got)
	}
	if msg := message(t, out, ConditionHealth); !containsAll(msg, "preconditions placed", "404") {
		t.Errorf("Health message %q should name the phase, the step and the status", msg)
	}
}

func TestExecute_TransientFailuresAskForARetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		break_ func(b *bundle)
		reason string
	}{
		{name: "API 503 on a param", break_: func(b *bundle) { b.steward.force("/api/v1/catalog-item-instances/o1", http.StatusServiceUnavailable) },
			reason: "Steward API 5xx"},
		{name: "API 429", break_: func(b *bundle) { b.steward.force("/api/v1/catalog-item-instances/o1", http.StatusTooManyRequests) },
			reason: "rate limited"},
		{name: "API unreachable", break_: func(b *bundle) { b.steward.srv.Close() }, reason: "connection errors"},
		{name: "apply unreachable", break_: func(b *bundle) { b.kube.failOn("apply", "cfg", Transient(errors.New("connection refused"))) },
			reason: "Kubernetes unreachable"},
		{name: "discovery timeout", break_: func(b *bundle) { b.kube.failOn("get", "rec-o1", Transient(errors.New("timeout"))) },
			reason: "Kubernetes timeouts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, clusterConfig)
			b.steward.setOrder("o1", order("o1", 1, "up", false))
			tt.break_(b)
			out := b.execute(t, event("o1", 1, false))
			if out.Retry == nil || !isTransient(out.Retry) || out.Report != nil {
				t.Fatalf("outcome = %+v, want Retry and no report\nreason: %s", out, tt.reason)
			}
		})
	}
}

func TestExecute_CancelledContextAsksForARetry(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig)
	b.steward.setOrder("o1", order("o1", 1, "up", false))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out, err := b.exec.Execute(ctx, event("o1", 1, false))
	if err != nil || out.Retry == nil || out.Report != nil {
		t.Fatalf("Execute = %+v, %v; want a Retry outcome", out, err)
	}
}

func TestExecute_ApplyRejectedIsReportedNotRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig)
	b.steward.setOrder("o1", order("o1", 1, "up", false))
	b.kube.failOn("apply", "creds", errors.New(`Secret "creds" is invalid: data: bad`))
	out := b.execute(t, event("o1", 1, false))
	if out.Retry != nil {
		t.Fatalf("Retry = %v, want none: a 4xx will not mend itself", out.Retry)
	}
	if calls := b.kube.takeCalls(); len(calls) != 2 {
		t.Errorf("calls = %v, want the two resources before the failure only", calls)
	}
	want := map[string]string{ConditionApplied: "True ApplyFailed", ConditionAvailable: "False ApplyFailed", ConditionHealth: "False ApplyFailed"}
	for typ, w := range want {
		if got := cond(t, out, typ); got != w {
			t.Errorf("%s = %q, want %q", typ, got, w)
		}
	}
	if msg := message(t, out, ConditionHealth); !containsAll(msg, "secret", "Secret steward-o1/creds", "is invalid") {
		t.Errorf("Health message %q should name the resource and the error", msg)
	}
}

func TestExecute_ParamFailuresAreExecutionFailed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml, wantMsg string
	}{
		{name: "missing required param", yaml: strings.Replace(clusterConfig, "{name: href, source: event.href, required: true}",
			"{name: href, source: event.nothere, required: true}", 1), wantMsg: "params href: is required, but event.nothere has no value"},
		{name: "CEL runtime error", yaml: strings.Replace(clusterConfig, `source: {expression: "prefix + '-' + orderId"}`,
			`source: {expression: "prefix + '-' + order.missing_field"}`, 1), wantMsg: "params ns:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.yaml)
			b.steward.setOrder("o1", order("o1", 1, "up", false))
			out := b.execute(t, event("o1", 1, false))
			if got := cond(t, out, ConditionHealth); got != "False ExecutionFailed" {
				t.Fatalf("Health = %q, want False ExecutionFailed", got)
			}
			if got := cond(t, out, ConditionAvailable); got != "False ExecutionFailed" {
				t.Errorf("Available = %q", got)
			}
			if msg := message(t, out, ConditionHealth); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("Health message %q, want it to contain %q", msg, tt.wantMsg)
			}
			if calls := b.kube.takeCalls(); len(calls) != 0 {
				t.Errorf("calls = %v, want none", calls)
			}
		})
	}
}

func TestExecute_PostOverridesAndData(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig+`
post:
  conditions:
    - type: Available
      status: {expression: "has(resources.namespace) && resources.namespace.status.phase == 'Active' ? 'True' : 'False'"}
      reason: {expression: "has(resources.namespace) ? 'NamespaceActive' : 'NoNamespace'"}
      message: "literal message"
    - type: Health
      status: False
      reason: Overridden
    - type: Custom
      status: {expression: "adapter.mode == 'create' && adapter.execution_status == 'success' ? 'True' : 'False'"}
  data:
    namespace: {expression: "resources.namespace.metadata.name"}
    nodes: {expression: "order.user_values[0].value"}
    state: {expression: "state.upperAscii()"}
    version: 2
`)
	b.kube.onApply = setNamespaceActive
	b.steward.setOrder("o1", order("o1", 1, "up", false))
	out := b.execute(t, event("o1", 1, false))

	if got, msg := cond(t, out, ConditionAvailable), message(t, out, ConditionAvailable); got != "True NamespaceActive" || msg != "literal message" {
		t.Errorf("Available = %q %q, want the override", got, msg)
	}
	if got := cond(t, out, ConditionHealth); got != "False Overridden" {
		t.Errorf("Health = %q: an override applies when the executor did not fail", got)
	}
	if got := cond(t, out, "Custom"); got != "True " {
		t.Errorf("Custom = %q, want True (a new condition type is added)", got)
	}
	var data map[string]any
	if err := json.Unmarshal(out.Report.Data, &data); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"namespace": "steward-o1", "nodes": 3.0, "state": "UP", "version": 2.0}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

func TestExecute_PostCannotHideAFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig+`
post:
  conditions:
    - {type: Health, status: "True", reason: AllGood}
`)
	b.steward.setOrder("o1", order("o1", 1, "up", false))
	b.kube.failOn("apply", "cfg", errors.New("forbidden"))
	out := b.execute(t, event("o1", 1, false))
	if got := cond(t, out, ConditionHealth); got != "False ApplyFailed" {
		t.Errorf("Health = %q, want False ApplyFailed: post may not hide the executor's failure", got)
	}
}

func TestExecute_ABrokenPostExpressionTurnsHealthFalse(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig+`
post:
  conditions:
    - {type: Available, status: {expression: "resources.nothere.status"}}
  data:
    x: {expression: "1 / 0"}
`)
	b.steward.setOrder("o1", order("o1", 1, "up", false))
	out := b.execute(t, event("o1", 1, false))
	if got := cond(t, out, ConditionHealth); got != "False ExecutionFailed" {
		t.Fatalf("Health = %q, want False ExecutionFailed", got)
	}
	if msg := message(t, out, ConditionHealth); !containsAll(msg, "post.conditions[0].status", "post.data.x") {
		t.Errorf("Health message %q should name each failing field", msg)
	}
	if got := cond(t, out, ConditionAvailable); got != "True ResourcesCreated" {
		t.Errorf("Available = %q: a failed override keeps the default", got)
	}
}

func TestExecute_RejectsEventsItCannotProcess(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig)
	other := event("o1", 1, false)
	other.Type = "steward.reconcile.vm"
	noID := event("", 1, false)
	noGen := event("o1", 1, false)
	delete(noGen.Data, "generation")
	for _, tc := range []struct {
		ev   Event
		want error
	}{{other, ErrUnhandledEvent}, {noID, ErrInvalidEvent}, {noGen, ErrInvalidEvent}} {
		if _, err := b.exec.Execute(t.Context(), tc.ev); !errors.Is(err, tc.want) {
			t.Errorf("Execute(%s %v) = %v, want %v", tc.ev.Type, tc.ev.Data["id"], err, tc.want)
		}
	}
}

func TestExecute_WithoutWhenDeletingTheEventDecides(t *testing.T) {
	t.Parallel()
	b := setup(t, strings.Replace(clusterConfig, "when_deleting: isDeleting\n", "", 1))
	b.steward.setOrder("o1", order("o1", 2, "deleting", true))
	out := b.execute(t, event("o1", 2, true))
	if out.Mode != ModeDelete {
		t.Errorf("Mode = %q, want delete: the event's deleted_at is set", out.Mode)
	}
}

func TestNewExecutor_RejectsABadConfigBuiltInGo(t *testing.T) {
	t.Parallel()
	cfg := &Config{Adapter: AdapterInfo{Name: "x"}, ServiceTypes: []string{"cluster"}, WhenDeleting: "nope(",
		Resources: []Resource{{Name: "a", Manifest: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}}}
	_, err := NewExecutor(cfg, Deps{Transport: newFakeTransport(), API: &HTTPAPI{}})
	ce, ok := errors.AsType[*ConfigError](err)
	if !ok {
		t.Fatalf("NewExecutor = %v, want a *ConfigError", err)
	}
	var fields []string
	for _, p := range ce.Problems {
		fields = append(fields, p.Field)
	}
	want := []string{"resources[0].manifest.metadata", "resources[0].discovery", "when_deleting"}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if _, err := NewExecutor(&Config{}, Deps{}); err == nil {
		t.Error("NewExecutor without deps succeeded")
	}
}

func TestPutReport_SendsTheReportAndClassifiesAnswers(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig)
	b.steward.setOrder("o1", order("o1", 1, "up", false))
	out := b.execute(t, event("o1", 1, false))
	if err := b.exec.PutReport(t.Context(), out); err != nil {
		t.Fatal(err)
	}
	b.steward.mu.Lock()
	sent := b.steward.reports["o1/test-adapter"]
	b.steward.mu.Unlock()
	if len(sent) != 1 {
		t.Fatalf("reports = %d, want 1", len(sent))
	}
	var got map[string]any
	_ = json.Unmarshal(sent[0], &got)
	if got["observed_generation"] != 1.0 || got["observed_time"] != "2026-05-01T12:00:00Z" || len(got["conditions"].([]any)) != 3 {
		t.Errorf("report body = %s", sent[0])
	}

	path := ReportPath("o1", "test-adapter")
	for code, wantTransient := range map[int]bool{http.StatusInternalServerError: true, http.StatusTooManyRequests: true, http.StatusBadRequest: false} {
		b.steward.force(path, code)
		err := b.exec.PutReport(t.Context(), out)
		if err == nil || isTransient(err) != wantTransient {
			t.Errorf("status %d: PutReport = %v, want transient=%v", code, err, wantTransient)
		}
	}
	b.steward.force(path, http.StatusNoContent)
	if err := b.exec.PutReport(t.Context(), out); err != nil {
		t.Errorf("204 (stale, discarded) = %v, want nil", err)
	}
}

func TestReport_IsWhatTheServerAccepts(t *testing.T) {
	t.Parallel()
	r := Report{ObservedGeneration: 2, ObservedTime: testNow, Conditions: []Condition{{Type: "Applied", Status: "True"}}, Data: json.RawMessage(`{}`)}
	b, _ := json.Marshal(r)
	want := `{"observed_generation":2,"observed_time":"2026-05-01T12:00:00Z","conditions":[{"type":"Applied","status":"True","reason":"","message":""}],"data":{}}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
	if p := ReportPath("a b", "x"); p != "/api/v1/catalog-item-instances/a%20b/adapter-statuses/x" {
		t.Errorf("ReportPath = %s", p)
	}
}

// setNamespaceActive plays the namespace controller: a namespace is Active
// once created.
func setNamespaceActive(obj *unstructured.Unstructured) {
	if obj.GetKind() == "Namespace" {
		_ = unstructured.SetNestedField(obj.Object, "Active", "status", "phase")
	}
}

// recordingTransport records the field managers of applies.
type recordingTransport struct {
	Transport
	managers []string
}

func (r *recordingTransport) Apply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	r.managers = append(r.managers, fieldManager)
	return r.Transport.Apply(ctx, obj, fieldManager)
}

func TestExecute_PostSeesTheAdapterState(t *testing.T) {
	t.Parallel()
	const post = `
post:
  data:
    mode: {expression: "adapter.mode"}
    status: {expression: "adapter.execution_status"}
    skipped: {expression: "adapter.resources_skipped"}
    skip_reason: {expression: "adapter.skip_reason"}
    phase: {expression: "adapter.error.phase"}
    step: {expression: "adapter.error.resource"}
    state: {expression: "state"}
`
	tests := []struct {
		name  string
		yaml  string
		state string
		want  map[string]any
	}{
		{name: "success", yaml: clusterConfig + post, state: "up", want: map[string]any{
			"mode": "create", "status": "success", "skipped": false, "skip_reason": "", "phase": "", "step": "", "state": "up"}},
		{name: "skipped", yaml: clusterConfig + post, state: "start", want: map[string]any{
			"mode": "create", "status": "skipped", "skipped": true,
			"skip_reason": `precondition placed not met: state is "start", want in ["up","creating","deleting","failed"]`,
			"phase":       "", "step": "", "state": "start"}},
		{name: "failed before the captures", state: "up",
			yaml: strings.Replace(clusterConfig, "source: event.href,", "source: event.nothere,", 1) + post,
			want: map[string]any{"mode": "create", "status": "failed", "skipped": true, "skip_reason": "",
				"phase": "params", "step": "href", "state": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.yaml)
			b.steward.setOrder("o1", order("o1", 1, tt.state, false))
			out := b.execute(t, event("o1", 1, false))
			var data map[string]any
			if err := json.Unmarshal(out.Report.Data, &data); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, data); diff != "" {
				t.Errorf("data (-want +got):\n%s\nconditions: %+v", diff, out.Report.Conditions)
			}
		})
	}
}

func TestExecute_IsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig)
	const orders = 8
	for i := range orders {
		id := fmt.Sprintf("o%d", i)
		b.steward.setOrder(id, order(id, 1, "up", false))
	}
	outs := make([]Outcome, orders)
	var wg sync.WaitGroup
	for i := range orders {
		wg.Go(func() {
			outs[i], _ = b.exec.Execute(t.Context(), event(fmt.Sprintf("o%d", i), 1, false))
		})
	}
	wg.Wait()
	for i, out := range outs {
		if out.Report == nil || cond(t, out, ConditionApplied) != "True AppliedSuccessfully" {
			t.Errorf("order o%d: %+v", i, out)
		}
		if !b.kube.has("Namespace", "", fmt.Sprintf("steward-o%d", i)) {
			t.Errorf("namespace of o%d missing", i)
		}
	}
}
