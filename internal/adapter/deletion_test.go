package adapter

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// created runs a creation event for o1, then marks the order deleted at
// generation 2, ready for deletion events.
func created(t *testing.T, b *bundle) {
	t.Helper()
	b.steward.setOrder("o1", order("o1", 1, "up", false))
	if out := b.execute(t, event("o1", 1, false)); cond(t, out, ConditionApplied) != "True AppliedSuccessfully" {
		t.Fatalf("creation: %+v", out.Report)
	}
	b.kube.takeCalls()
	b.steward.setOrder("o1", order("o1", 2, "deleting", true))
}

func TestDelete_HonoursAfterAcrossReconciles(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig)
	created(t, b)
	// A controller holds the ConfigMap, and Foreground will hold the
	// namespace while its dependents go.
	b.kube.setFinalizers("ConfigMap", "steward-o1", "cfg", "example.com/hold")
	b.kube.setFinalizers("Namespace", "", "steward-o1", "foregroundDeletion")

	// Pass 1: the ConfigMap and the Secret can go; the Secret is gone at
	// once, the ConfigMap stays, so the namespace waits.
	out := b.execute(t, event("o1", 2, true))
	if out.Mode != ModeDelete {
		t.Fatalf("Mode = %q, want delete", out.Mode)
	}
	want := []string{"delete ConfigMap steward-o1/cfg Background", "delete Secret steward-o1/creds Orphan"}
	if diff := cmp.Diff(want, b.kube.takeCalls()); diff != "" {
		t.Errorf("pass 1 calls (-want +got):\n%s", diff)
	}
	if got := cond(t, out, ConditionApplied); got != "True DeletionInProgress" {
		t.Errorf("pass 1 Applied = %q", got)
	}
	if got := cond(t, out, ConditionAvailable) + "/" + cond(t, out, ConditionHealth) + "/" + cond(t, out, ConditionFinalized); got != "False Deleting/True Healthy/" {
		t.Errorf("pass 1 Available/Health/Finalized = %q", got)
	}
	if msg := message(t, out, ConditionApplied); !containsAll(msg, "namespace (waits for config)", "config (being deleted; finalizers: example.com/hold)") {
		t.Errorf("pass 1 message %q should list what is pending and why", msg)
	}

	// Pass 2: nothing changed, nothing is deleted again.
	out = b.execute(t, event("o1", 2, true))
	if calls := b.kube.takeCalls(); len(calls) != 0 {
		t.Errorf("pass 2 calls = %v, want none: a deletion under way is not repeated", calls)
	}
	if got := cond(t, out, ConditionApplied); got != "True DeletionInProgress" {
		t.Errorf("pass 2 Applied = %q", got)
	}

	// Pass 3: the ConfigMap's controller is done; the namespace may go,
	// Foreground, and stays while Kubernetes removes its dependents.
	b.kube.release("ConfigMap", "steward-o1", "cfg")
	out = b.execute(t, event("o1", 2, true))
	if diff := cmp.Diff([]string{"delete Namespace steward-o1 Foreground"}, b.kube.takeCalls()); diff != "" {
		t.Errorf("pass 3 calls (-want +got):\n%s", diff)
	}
	if msg := message(t, out, ConditionApplied); !strings.Contains(msg, "namespace (being deleted; finalizers: foregroundDeletion)") {
		t.Errorf("pass 3 message = %q", msg)
	}

	// Pass 4: the namespace is gone; the retained record stays.
	b.kube.release("Namespace", "", "steward-o1")
	out = b.execute(t, event("o1", 2, true))
	if calls := b.kube.takeCalls(); len(calls) != 0 {
		t.Errorf("pass 4 calls = %v, want none", calls)
	}
	for typ, want := range map[string]string{
		ConditionApplied: "False Deleted", ConditionAvailable: "False Deleted",
		ConditionHealth: "True Healthy", ConditionFinalized: "True Deleted",
	} {
		if got := cond(t, out, typ); got != want {
			t.Errorf("pass 4 %s = %q, want %q", typ, got, want)
		}
	}
	if !b.kube.has("ConfigMap", "default", "rec-o1") {
		t.Error("the retained record was deleted")
	}
	if msg := message(t, out, ConditionApplied); !strings.Contains(msg, "retained: record") {
		t.Errorf("pass 4 message %q should say what was retained", msg)
	}
	if out.Report.ObservedGeneration != 2 {
		t.Errorf("observed_generation = %d, want the deleting generation 2", out.Report.ObservedGeneration)
	}
}

func TestDelete_WhatIsGoneAtOnceLetsItsDependentsGoInTheSamePass(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig)
	created(t, b)
	out := b.execute(t, event("o1", 2, true))
	want := []string{
		"delete ConfigMap steward-o1/cfg Background",
		"delete Secret steward-o1/creds Orphan",
		"delete Namespace steward-o1 Foreground",
	}
	if diff := cmp.Diff(want, b.kube.takeCalls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := cond(t, out, ConditionFinalized); got != "True Deleted" {
		t.Errorf("Finalized = %q, want True Deleted in one pass", got)
	}
}

func TestDelete_NotFoundCountsAsDeleted(t *testing.T) {
	t.Parallel()
	b := setup(t, clusterConfig)
	b.steward.setOrder("o1", order("o1", 2, "deleting", true))
	out := b.execute(t, event("o1", 2, true))
	if calls := b.kube.takeCalls(); len(calls) != 0 {
		t.Errorf("calls = %v, want none: nothing exists", calls)
	}
	if got := cond(t, out, ConditionApplied) + "/" + cond(t, out, ConditionHealth); got != "False Deleted/True Healthy" {
		t.Errorf("Applied/Health = %q, want False Deleted/True Healthy", got)
	}
}

// goConfig builds a config in Go, as a program embedding the executor
// would, skipping Parse: one ConfigMap per name, with its after list.
func goConfig(policy string, after map[string][]string, names ...string) *Config {
	cfg := &Config{Adapter: AdapterInfo{Name: "go-built"}, ServiceTypes: []string{"cluster"}}
	for _, n := range names {
		cfg.Resources = append(cfg.Resources, Resource{
			Name:          n,
			Manifest:      map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": n, "namespace": "default"}},
			Discovery:     Discovery{Namespace: "default", ByName: n},
			DeleteOptions: DeleteOptions{PropagationPolicy: policy, After: after[n]},
		})
	}
	return cfg
}

func TestDelete_AnInvalidOrderAtExecutionDeletesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		after      map[string][]string
		wantReason string
		wantMsg    []string
	}{
		{name: "cycle", after: map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}},
			wantReason: ReasonInvalidDeletionOrder, wantMsg: []string{"cycle", "a → b → c → a"}},
		{name: "self", after: map[string][]string{"b": {"b"}},
			wantReason: ReasonInvalidDeletionOrder, wantMsg: []string{"b → b"}},
		{name: "unknown name", after: map[string][]string{"b": {"a", "ghost"}, "c": {"phantom"}},
			wantReason: ReasonInvalidDeletionConfig, wantMsg: []string{`resource "b" comes after unknown resource "ghost"`, `"c"`, `"phantom"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupConfig(t, goConfig("", tt.after, "a", "b", "c"))
			b.steward.setOrder("o1", order("o1", 1, "up", false))
			// Creation mode does not need the order, and works.
			if out := b.execute(t, event("o1", 1, false)); cond(t, out, ConditionHealth) != "True Healthy" {
				t.Fatalf("creation with a bad deletion order: %+v", out.Report)
			}
			b.kube.takeCalls()

			out := b.execute(t, event("o1", 2, true))
			if calls := deletes(b.kube.takeCalls()); len(calls) != 0 {
				t.Errorf("deletes = %v, want none", calls)
			}
			if got := cond(t, out, ConditionHealth); got != "False "+tt.wantReason {
				t.Errorf("Health = %q, want False %s", got, tt.wantReason)
			}
			if got := cond(t, out, ConditionApplied); got != "True "+tt.wantReason {
				t.Errorf("Applied = %q, want True: resources still exist, the gate must stay shut", got)
			}
			if msg := message(t, out, ConditionHealth); !containsAll(msg, tt.wantMsg...) {
				t.Errorf("Health message %q, want it to name %v", msg, tt.wantMsg)
			}
		})
	}
}

func TestDelete_PassesThePropagationPolicyExactly(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ policy, want string }{
		{"", "Background"}, {"Background", "Background"}, {"Foreground", "Foreground"}, {"Orphan", "Orphan"},
	} {
		t.Run("policy "+tt.policy, func(t *testing.T) {
			t.Parallel()
			b := setupConfig(t, goConfig(tt.policy, nil, "a"))
			b.kube.put(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "default"}})
			b.execute(t, event("o1", 2, true))
			if diff := cmp.Diff([]string{"delete ConfigMap default/a " + tt.want}, b.kube.takeCalls()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDelete_RetainedResourcesStayAndDoNotBlock(t *testing.T) {
	t.Parallel()
	cfg := goConfig("", map[string][]string{"b": {"a"}}, "a", "b")
	cfg.Resources[0].DeleteOptions = DeleteOptions{Retain: true}
	b := setupConfig(t, cfg)
	for _, n := range []string{"a", "b"} {
		b.kube.put(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": n, "namespace": "default"}})
	}
	out := b.execute(t, event("o1", 2, true))
	if diff := cmp.Diff([]string{"delete ConfigMap default/b Background"}, b.kube.takeCalls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if !b.kube.has("ConfigMap", "default", "a") {
		t.Error("retained resource a was deleted")
	}
	if got := cond(t, out, ConditionApplied); got != "False Deleted" {
		t.Errorf("Applied = %q, want False Deleted: a retained resource counts as done", got)
	}
}

func TestDelete_AFailedDeleteDoesNotStopTheOthers(t *testing.T) {
	t.Parallel()
	b := setupConfig(t, goConfig("", map[string][]string{"c": {"a"}}, "a", "b", "c"))
	for _, n := range []string{"a", "b", "c"} {
		b.kube.put(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": n, "namespace": "default"}})
	}
	b.kube.failOn("delete", "a", errors.New(`configmaps "a" is forbidden`))
	out := b.execute(t, event("o1", 2, true))
	if diff := cmp.Diff([]string{"delete ConfigMap default/b Background"}, b.kube.takeCalls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := cond(t, out, ConditionHealth) + "/" + cond(t, out, ConditionApplied); got != "False DeletionFailed/True DeletionFailed" {
		t.Errorf("Health/Applied = %q", got)
	}
	if msg := message(t, out, ConditionHealth); !containsAll(msg, "a: delete ConfigMap default/a", "forbidden", "c (waits for a)") {
		t.Errorf("Health message %q should name the failure and what waits", msg)
	}
	if out.Retry != nil {
		t.Errorf("Retry = %v, want none for a terminal failure", out.Retry)
	}
}

func TestDelete_ATransientDeleteFailureRetriesAfterTryingTheOthers(t *testing.T) {
	t.Parallel()
	b := setupConfig(t, goConfig("", nil, "a", "b"))
	for _, n := range []string{"a", "b"} {
		b.kube.put(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": n, "namespace": "default"}})
	}
	b.kube.failOn("delete", "a", Transient(errors.New("503")))
	out := b.execute(t, event("o1", 2, true))
	if out.Retry == nil || out.Report != nil {
		t.Fatalf("outcome = %+v, want Retry", out)
	}
	if b.kube.has("ConfigMap", "default", "b") {
		t.Error("b was not deleted: one failure must not stop the others")
	}
}

func TestDelete_AResourceThatCannotBeDiscoveredIsNotTakenForDeleted(t *testing.T) {
	t.Parallel()
	b := setup(t, strings.Replace(clusterConfig, `discovery: {namespace: "{{ .ns }}", by_name: cfg}`,
		`discovery: {namespace: "{{ .ns }}", by_name: "{{ .order.spec.name }}"}`, 1))
	b.steward.setOrder("o1", order("o1", 2, "deleting", true)) // no spec: the template fails
	out := b.execute(t, event("o1", 2, true))
	if calls := deletes(b.kube.takeCalls()); len(calls) != 0 {
		t.Errorf("deletes = %v, want none", calls)
	}
	if got := cond(t, out, ConditionHealth); got != "False ExecutionFailed" {
		t.Errorf("Health = %q, want False ExecutionFailed", got)
	}
	if got := cond(t, out, ConditionFinalized); got != "" {
		t.Errorf("Finalized = %q, want none: config was never found", got)
	}
	if msg := message(t, out, ConditionHealth); !containsAll(msg, "resources config", "spec") {
		t.Errorf("Health message %q should name the resource and the template error", msg)
	}
}
