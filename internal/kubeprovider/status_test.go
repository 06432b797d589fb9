package kubeprovider_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stewardhq/steward/internal/kubeprovider"
	"github.com/stewardhq/steward/pkg/provider"
)

func deploymentWith(replicas int32, generation int64, st appsv1.DeploymentStatus) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "app", Generation: generation},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas}, Status: st}
}

func waitingPod(reason, message string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-1"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
		Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}}}}
}

func TestObserve_StatusFromTheDeploymentAndItsPods(t *testing.T) {
	t.Parallel()
	settled := appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3}
	degraded := settled
	degraded.ReadyReplicas, degraded.AvailableReplicas = 1, 1
	rolling := settled
	rolling.UpdatedReplicas, rolling.Replicas = 1, 4
	stuck := rolling
	stuck.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
		Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "app-2" has timed out progressing.`}}
	// Scaled by hand from 2 to 4, where the quota admits 3 pods.
	quotaBlocked := appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
			Message: `pods "app-75d9646465-hl4tf" is forbidden: exceeded quota: app-resources, requested: limits.cpu=100m,requests.cpu=100m, ` +
				`used: limits.cpu=300m,requests.cpu=300m, limited: limits.cpu=300m,requests.cpu=300m`}}}
	otherRefusal := quotaBlocked
	otherRefusal.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue,
		Reason: "FailedCreate", Message: `pods "app-1" is forbidden: exceeded quota: garbled`}}
	for name, tc := range map[string]struct {
		d        *appsv1.Deployment
		pods     []corev1.Pod
		status   string
		degraded bool
		message  string
	}{
		"not created":        {nil, nil, kubeprovider.StatusProvisioning, false, "not created"},
		"every replica":      {deploymentWith(3, 2, settled), nil, kubeprovider.StatusRunning, false, "3 of 3 replicas ready"},
		"some replicas":      {deploymentWith(3, 2, degraded), nil, kubeprovider.StatusRunning, true, "degraded: 1 of 3"},
		"new spec unseen":    {deploymentWith(3, 3, settled), nil, kubeprovider.StatusProvisioning, false, "rolling out"},
		"rolling out":        {deploymentWith(3, 2, rolling), nil, kubeprovider.StatusProvisioning, false, "1 of 3 replicas updated"},
		"deadline exceeded":  {deploymentWith(3, 2, stuck), nil, kubeprovider.StatusFailed, false, "did not finish in time"},
		"image pull failing": {deploymentWith(3, 2, rolling), []corev1.Pod{waitingPod("ImagePullBackOff", "Back-off pulling image \"nope\"")}, kubeprovider.StatusFailed, false, "ImagePullBackOff: Back-off pulling image"},
		"crash loop":         {deploymentWith(3, 2, degraded), []corev1.Pod{waitingPod("CrashLoopBackOff", "")}, kubeprovider.StatusFailed, false, "container app: CrashLoopBackOff"},
		"still creating":     {deploymentWith(3, 2, settled), []corev1.Pod{waitingPod("ContainerCreating", "")}, kubeprovider.StatusRunning, false, "3 of 3"},
		"scaled to zero":     {deploymentWith(0, 2, appsv1.DeploymentStatus{ObservedGeneration: 2}), nil, kubeprovider.StatusRunning, false, "scaled to zero"},
		"quota refuses pods": {deploymentWith(4, 2, quotaBlocked), nil, kubeprovider.StatusProvisioning, false,
			"blocked by the namespace's quota app-resources: 3 of 4 replicas created, 3 ready; it refused a pod requesting " +
				"limits.cpu=100m,requests.cpu=100m (used limits.cpu=300m,requests.cpu=300m, limited to limits.cpu=300m,requests.cpu=300m)"},
		"pods refused":        {deploymentWith(4, 2, otherRefusal), nil, kubeprovider.StatusProvisioning, false, "pods cannot be created: 3 of 4 replicas created, 3 ready; FailedCreate: pods \"app-1\" is forbidden: exceeded quota: garbled"},
		"refused, yet enough": {deploymentWith(3, 2, quotaBlocked), nil, kubeprovider.StatusRunning, false, "3 of 3 replicas ready"},
	} {
		got := kubeprovider.Observe(tc.d, tc.pods)
		if got.Status != tc.status || got.Degraded != tc.degraded || !strings.Contains(got.Message, tc.message) {
			t.Errorf("%s: %+v, want %s (degraded %v) saying %q", name, got, tc.status, tc.degraded, tc.message)
		}
	}
}

func TestObserve_CrashLoopSaysHowTheContainerLastEnded(t *testing.T) {
	t.Parallel()
	crashing := waitingPod("CrashLoopBackOff", "back-off 10s restarting failed container=app pod=app-1")
	crashing.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
		ExitCode: 1, Reason: "Error",
		Message: "starting\nsleep: invalid time interval 'notanumber'\nTry 'sleep --help' for more information.\n"}
	got := kubeprovider.Observe(deploymentWith(1, 2, appsv1.DeploymentStatus{ObservedGeneration: 2}), []corev1.Pod{crashing})
	want := "pod app-1: container app: CrashLoopBackOff: back-off 10s restarting failed container=app pod=app-1; " +
		"last exit code 1 (Error): starting | sleep: invalid time interval 'notanumber' | Try 'sleep --help' for more information."
	if got.Status != kubeprovider.StatusFailed || got.Message != want {
		t.Errorf("Observe = %s %q, want FAILED %q", got.Status, got.Message, want)
	}

	// A long termination message is cut to the bound, its end kept.
	crashing.Status.ContainerStatuses[0].LastTerminationState.Terminated.Message = strings.Repeat("x", 5000) + " the end"
	got = kubeprovider.Observe(deploymentWith(1, 2, appsv1.DeploymentStatus{ObservedGeneration: 2}), []corev1.Pod{crashing})
	detail := strings.TrimPrefix(got.Message, "pod app-1: container app: ")
	if len(detail) > provider.MaxDetailLen || !strings.HasSuffix(detail, "x the end") {
		t.Errorf("Observe of a long termination message: %d bytes %q…, want at most %d ending in the message's end",
			len(detail), detail[:min(len(detail), 40)], provider.MaxDetailLen)
	}
}
