package adapter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deleteResources is deletion mode, one pass of it. Each reconcile goes
// as far as it can and reports the rest as pending; the sentinel sends the
// next event while the order is not ready, so the pass repeats until every
// resource is gone.
//
// A resource is done when it is retained (never deleted), not found, or
// gone right after its delete. A resource is deleted only when every
// resource it comes after is done. After its delete it is discovered
// again: gone means done, so its dependents may go in this same pass;
// still there (finalizers, Foreground waiting for its dependents) means
// pending, and its dependents wait for a later pass. A failed delete does
// not stop the other deletable resources: the errors are collected.
func (r *run) deleteResources(ctx context.Context) error {
	names, after := r.deletionInputs()
	g, faults := buildDeletionGraph(names, after)
	if !faults.ok() {
		// Nothing is deleted: any order would be a guess.
		reason, msg := faults.describe(names)
		r.fail(sitInvalidDeletion, &stepError{phase: phaseResources, err: errors.New(msg)})
		r.invalidReason, r.message = reason, msg
		return r.discoverAll(ctx, false)
	}
	order, _ := g.order()
	if err := r.discoverAll(ctx, true); err != nil {
		return err
	}
	if r.failure != nil {
		return nil // a resource could not be discovered: deleting blind could skip it
	}

	done := make([]bool, len(names))
	var pending, failures []string
	var transient error
	for _, i := range order {
		rp := r.e.prog.resources[i]
		objs := r.found[rp.name]
		if rp.retain || len(objs) == 0 {
			done[i] = true
			continue
		}
		var waits []string
		for _, j := range g.after[i] {
			if !done[j] {
				waits = append(waits, names[j])
			}
		}
		if len(waits) > 0 {
			pending = append(pending, fmt.Sprintf("%s (waits for %s)", rp.name, strings.Join(waits, ", ")))
			continue
		}
		left, err := r.deleteOne(ctx, rp, objs)
		switch {
		case err != nil && isTransient(err):
			transient = err
			pending = append(pending, fmt.Sprintf("%s (%v)", rp.name, err))
		case err != nil:
			failures = append(failures, fmt.Sprintf("%s: %v", rp.name, err))
		case len(left) == 0:
			done[i] = true
		default:
			pending = append(pending, fmt.Sprintf("%s (%s)", rp.name, beingDeleted(left)))
		}
	}
	return r.settleDeletion(pending, failures, transient)
}

// settleDeletion picks the pass's row of the decision matrix: retry on a
// transient failure (the rest was still tried), DeletionFailed on a
// terminal one, DeletionInProgress while anything is pending, else Deleted.
func (r *run) settleDeletion(pending, failures []string, transient error) error {
	switch {
	case transient != nil:
		return transient
	case len(failures) > 0:
		msg := "delete failed: " + strings.Join(failures, "; ")
		if len(pending) > 0 {
			msg += "; pending: " + strings.Join(pending, "; ")
		}
		r.fail(sitDeletionFailed, &stepError{phase: phaseResources, err: errors.New(msg)})
		r.message = msg
	case len(pending) > 0:
		r.sit = sitDeleting
		r.message = "pending: " + strings.Join(pending, "; ")
	default:
		r.sit = sitDeleted
		r.message = "every resource is deleted"
		if retained := r.retained(); retained != "" {
			r.message += "; retained: " + retained
		}
	}
	return nil
}

// deleteOne deletes a resource's objects with its propagation policy and
// discovers it again, returning what is left. An object already being
// deleted (deletionTimestamp set) is not deleted again: the first delete
// chose its propagation.
func (r *run) deleteOne(ctx context.Context, rp resourceProg, objs []unstructured.Unstructured) ([]unstructured.Unstructured, error) {
	for _, obj := range objs {
		if obj.GetDeletionTimestamp() != nil {
			continue
		}
		if err := r.e.deps.Transport.Delete(ctx, rp.gvk, obj.GetNamespace(), obj.GetName(), rp.policy); err != nil {
			return nil, fmt.Errorf("delete %s %s: %w", rp.gvk.Kind, objectName(obj.GetNamespace(), obj.GetName()), err)
		}
	}
	left, err := r.discover(ctx, rp, r.templateData())
	if err != nil {
		return nil, fmt.Errorf("discover after delete: %w", err)
	}
	r.found[rp.name] = left
	return left, nil
}

func (r *run) deletionInputs() ([]string, [][]string) {
	res := r.e.prog.resources
	names := make([]string, len(res))
	after := make([][]string, len(res))
	for i, rp := range res {
		names[i], after[i] = rp.name, rp.after
	}
	return names, after
}

// retained lists the retained resources that still exist.
func (r *run) retained() string {
	var out []string
	for _, rp := range r.e.prog.resources {
		if rp.retain && len(r.found[rp.name]) > 0 {
			out = append(out, rp.name)
		}
	}
	return strings.Join(out, ", ")
}

// beingDeleted says why objects are still there after their delete.
func beingDeleted(objs []unstructured.Unstructured) string {
	var finalizers []string
	for _, o := range objs {
		finalizers = append(finalizers, o.GetFinalizers()...)
	}
	if len(finalizers) == 0 {
		return "being deleted"
	}
	return "being deleted; finalizers: " + strings.Join(finalizers, ", ")
}
