package kubeprovider

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stewardhq/steward/pkg/provider"
)

// differences names each managed field of the app's Deployment and
// Service that differs from what its spec makes of them, as "replicas:
// want 2, found 5": what `kubectl scale`, `kubectl set env` or an edit
// changed out of band.
func differences(spec AppSpec, d *appsv1.Deployment, svc *corev1.Service) []string {
	want := deployment(Order{Spec: spec}, metav1.ObjectMeta{})
	var out []string
	differ := func(field string, want, found any) {
		out = append(out, fmt.Sprintf("%s: want %v, found %v", field, want, found))
	}
	if w, f := *want.Spec.Replicas, replicaCount(d); w != f {
		differ("replicas", w, f)
	}
	wc := want.Spec.Template.Spec.Containers[0]
	i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == appName })
	if i < 0 {
		return append(out, "container "+appName+": missing from the deployment")
	}
	fc := d.Spec.Template.Spec.Containers[i]
	if wc.Image != fc.Image {
		differ("image", wc.Image, fc.Image)
	}
	if !slices.Equal(wc.Command, fc.Command) {
		differ("command", quoted(wc.Command), quoted(fc.Command))
	}
	if !slices.Equal(wc.Args, fc.Args) {
		differ("args", quoted(wc.Args), quoted(fc.Args))
	}
	if w, f := envText(wc.Env), envText(fc.Env); w != f {
		differ("env", w, f)
	}
	if w, f := resourcesText(wc.Resources), resourcesText(fc.Resources); w != f {
		differ("resources", w, f)
	}
	if w, f := portsText(wc.Ports), portsText(fc.Ports); w != f {
		differ("ports", w, f)
	}
	if wantSvc := service(spec, metav1.ObjectMeta{}); wantSvc != nil {
		switch {
		case svc == nil:
			out = append(out, "service "+appName+": missing")
		case servicePortsText(wantSvc.Spec.Ports) != servicePortsText(svc.Spec.Ports):
			differ("service ports", servicePortsText(wantSvc.Spec.Ports), servicePortsText(svc.Spec.Ports))
		}
	}
	for i, s := range out {
		if len(s) > provider.MaxSyncDifferenceLen {
			out[i] = s[:provider.MaxSyncDifferenceLen-3] + "..."
		}
	}
	return out[:min(len(out), provider.MaxSyncDifferences)]
}

func replicaCount(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func quoted(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}

// envText is an environment as NAME=value pairs; values are shown, as
// `kubectl describe` shows them (the spec holds no secret: secrets are
// not in a container-app's spec).
func envText(env []corev1.EnvVar) string {
	if len(env) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(env))
	for _, e := range env {
		v := e.Value
		if e.ValueFrom != nil {
			v = "(from a reference)"
		}
		parts = append(parts, e.Name+"="+v)
	}
	return strings.Join(parts, " ")
}

// resourcesText is requests and limits in a canonical form (quantities
// compared by value: 0.5 is 500m).
func resourcesText(r corev1.ResourceRequirements) string {
	list := func(l corev1.ResourceList) string {
		var parts []string
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := l[name]; ok {
				parts = append(parts, fmt.Sprintf("%s=%d", name, q.MilliValue()))
			}
		}
		return strings.Join(parts, ",")
	}
	return "requests{" + list(r.Requests) + "} limits{" + list(r.Limits) + "}"
}

func portsText(ports []corev1.ContainerPort) string {
	parts := make([]string, 0, len(ports))
	for _, p := range ports {
		parts = append(parts, fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol))
	}
	return strings.Join(parts, ",")
}

func servicePortsText(ports []corev1.ServicePort) string {
	parts := make([]string, 0, len(ports))
	for _, p := range ports {
		parts = append(parts, fmt.Sprintf("%d->%s/%s", p.Port, p.TargetPort.String(), p.Protocol))
	}
	return strings.Join(parts, ",")
}

// outputs are what the order shows of the app: its namespace, replicas,
// and how to reach its Service in the cluster.
func outputs(namespace, clusterDomain string, svc *corev1.Service, o Observed) provider.Outputs {
	out := provider.Outputs{"namespace": namespace, "replicas": o.Desired, "ready_replicas": o.Ready}
	if svc != nil {
		out["service_host"] = svc.Name + "." + namespace + ".svc." + clusterDomain
		if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
			out["cluster_ip"] = ip
		}
		parts := make([]string, 0, len(svc.Spec.Ports))
		for _, p := range svc.Spec.Ports {
			parts = append(parts, fmt.Sprintf("%d/%s", p.Port, p.Protocol))
		}
		out["ports"] = strings.Join(parts, ",")
	}
	return out
}
