package kubeprovider

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/stewardhq/steward/pkg/provider"
)

// The instance statuses an app reports (API.md's InstanceStatus).
const (
	StatusProvisioning = "PROVISIONING"
	StatusRunning      = "RUNNING"
	StatusFailed       = "FAILED"
)

// Observed is an app's state as its Deployment and pods show it.
type Observed struct {
	// Status is PROVISIONING (rolling out), RUNNING or FAILED.
	Status  string
	Message string
	// Ready and Desired count replicas; Degraded is a running app with
	// fewer ready replicas than desired.
	Ready, Desired int32
	Degraded       bool
	// Blocked says why pods of a rollout not done cannot be created (the
	// namespace's quota refuses them); "" when nothing stops them.
	Blocked string
}

// failingReasons are the container waiting reasons that no amount of
// waiting mends: the image cannot be had, or the container keeps dying.
var failingReasons = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CrashLoopBackOff",
	"CreateContainerConfigError", "CreateContainerError"}

// Observe reads the app's state from its Deployment and the pods it
// selects (nil: not created yet).
func Observe(d *appsv1.Deployment, pods []corev1.Pod) Observed {
	if d == nil {
		return Observed{Status: StatusProvisioning, Message: "the deployment is not created yet"}
	}
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	o := Observed{Desired: desired, Ready: d.Status.ReadyReplicas}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			o.Status, o.Message = StatusFailed, "the rollout did not finish in time: "+c.Message
			return o
		}
	}
	if msg := failingPod(pods); msg != "" {
		o.Status, o.Message = StatusFailed, msg
		return o
	}
	rolledOut := d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas >= desired &&
		d.Status.Replicas == d.Status.UpdatedReplicas
	switch {
	case !rolledOut:
		o.Status = StatusProvisioning
		o.Message = fmt.Sprintf("rolling out: %d of %d replicas updated, %d ready", d.Status.UpdatedReplicas, desired, o.Ready)
	case desired == 0:
		o.Status, o.Message = StatusRunning, "scaled to zero replicas"
	case d.Status.AvailableReplicas >= desired:
		o.Status, o.Message = StatusRunning, fmt.Sprintf("%d of %d replicas ready", o.Ready, desired)
	case d.Status.AvailableReplicas > 0:
		o.Status, o.Degraded = StatusRunning, true
		o.Message = fmt.Sprintf("degraded: %d of %d replicas ready", o.Ready, desired)
	default:
		o.Status = StatusProvisioning
		o.Message = fmt.Sprintf("waiting for replicas: 0 of %d ready", desired)
	}
	if o.Status == StatusProvisioning || o.Degraded {
		// A refusal is said instead of the progress it stops: a scale-up
		// the quota blocks would otherwise read as rolling out for good.
		if o.Blocked = podsRefused(d, desired); o.Blocked != "" {
			o.Message = o.Blocked
		}
	}
	return o
}

// podsRefused says why the Deployment's pods cannot be created, from its
// ReplicaFailure condition (the ReplicaSet's, which the deployment
// controller copies): for the namespace's quota, the quota and what it
// refused; "" when nothing is refused.
func podsRefused(d *appsv1.Deployment, desired int32) string {
	i := slices.IndexFunc(d.Status.Conditions, func(c appsv1.DeploymentCondition) bool {
		return c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue
	})
	if i < 0 {
		return ""
	}
	c := d.Status.Conditions[i]
	counts := fmt.Sprintf("%d of %d replicas created, %d ready", d.Status.Replicas, desired, d.Status.ReadyReplicas)
	// The quota admission's refusal: `pods "app-x" is forbidden: exceeded
	// quota: NAME, requested: R, used: U, limited: L`.
	_, tail, isQuota := strings.Cut(c.Message, "exceeded quota: ")
	name, rest, ok1 := strings.Cut(tail, ", requested: ")
	requested, rest, ok2 := strings.Cut(rest, ", used: ")
	used, limited, ok3 := strings.Cut(rest, ", limited: ")
	if isQuota && ok1 && ok2 && ok3 {
		return provider.Detail(fmt.Sprintf("blocked by the namespace's quota %s: %s; it refused a pod requesting %s (used %s, limited to %s)",
			name, counts, requested, used, limited))
	}
	return provider.Detail(fmt.Sprintf("pods cannot be created: %s; %s: %s", counts, cmp.Or(c.Reason, "ReplicaFailure"), c.Message))
}

// failingPod describes the first pod whose container cannot start, or "":
// the pod, the container and its failure detail (containerFailure).
func failingPod(pods []corev1.Pod) string {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && slices.Contains(failingReasons, w.Reason) {
				return fmt.Sprintf("pod %s: container %s: %s", p.Name, cs.Name, containerFailure(cs))
			}
		}
	}
	return ""
}

// containerFailure is the failure detail of a container that waits to
// start again: its waiting reason and message, then how it last ended (exit
// code, reason and message; the message is the termination log, or the
// log's tail under terminationMessagePolicy FallbackToLogsOnError), on one
// line and bounded as provider.Detail bounds it, the end kept.
func containerFailure(cs corev1.ContainerStatus) string {
	w := cs.State.Waiting
	s := w.Reason
	if m := provider.Detail(w.Message); m != "" {
		s += ": " + m
	}
	if t := cs.LastTerminationState.Terminated; t != nil {
		s += fmt.Sprintf("; last exit code %d", t.ExitCode)
		if t.Reason != "" {
			s += " (" + t.Reason + ")"
		}
		if m := provider.Detail(t.Message); m != "" {
			s += ": " + m
		}
	}
	return provider.Detail(s)
}
