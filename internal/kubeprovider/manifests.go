package kubeprovider

import (
	"cmp"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The labels every object of an order carries.
const (
	LabelOrder    = "steward.dev/order-id"
	LabelInstance = "steward.dev/instance-id"
	// labelApp selects the app's pods.
	labelApp = "steward.dev/app"
)

// appName is the name of the Deployment, its container and its Service.
const appName = "app"

// Namespace is the namespace of an instance: its own, named after it.
func Namespace(instanceID string) string { return "steward-" + instanceID }

// The annotations on an instance's namespace: what the provider needs of
// the order after the create (drift is judged against the spec, runtime
// reports name the project).
const (
	annotationSpec    = "steward.dev/spec"
	annotationProject = "steward.dev/project"
)

// Order is what one order's objects are made from.
type Order struct {
	OrderID    string
	InstanceID string
	// Project is the order's project (runtime reports name it).
	Project string
	Spec    AppSpec
}

// Manifests returns the objects that realise the order, in the order they
// are applied: the Namespace; a ResourceQuota and a LimitRange when it sets
// resources; a NetworkPolicy that admits only its own namespace; a Service
// when it is exposed with service ports; the Deployment, last. Each
// carries the order's labels. The spec must be valid (AppSpec.Validate).
func Manifests(o Order) ([]*unstructured.Unstructured, error) {
	ns := Namespace(o.InstanceID)
	spec, err := json.Marshal(o.Spec)
	if err != nil {
		return nil, fmt.Errorf("kubeprovider: encode the spec: %w", err)
	}
	labels := map[string]string{LabelOrder: o.OrderID, LabelInstance: o.InstanceID}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	// The Deployment comes last: its existence says that every object
	// before it was written, so a create cut half way (a provider killed)
	// is told from a finished one (see Provider.finish).
	typed := []runtime.Object{
		&corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels,
			Annotations: map[string]string{annotationSpec: string(spec), annotationProject: o.Project}}},
	}
	if r := o.Spec.Resources; r != nil {
		quota, limits, err := resourceObjects(*r, replicas(o.Spec), meta("app-resources"))
		if err != nil {
			return nil, err
		}
		typed = append(typed, quota, limits)
	}
	typed = append(typed, &networkingv1.NetworkPolicy{
		TypeMeta:   typeMeta("networking.k8s.io/v1", "NetworkPolicy"),
		ObjectMeta: meta("same-namespace-only"),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{}, // every pod of the namespace
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			// From pods of this namespace only.
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}},
		},
	})
	if svc := service(o.Spec, meta(appName)); svc != nil {
		typed = append(typed, svc)
	}
	typed = append(typed, deployment(o, meta(appName)))
	out := make([]*unstructured.Unstructured, 0, len(typed))
	for _, obj := range typed {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("kubeprovider: %T to unstructured: %w", obj, err)
		}
		u := &unstructured.Unstructured{Object: m}
		// Server-side apply wants no status and no creation time.
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
		out = append(out, u)
	}
	return out, nil
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func deployment(o Order, meta metav1.ObjectMeta) *appsv1.Deployment {
	s := o.Spec
	replicas := replicas(s)
	podLabels := map[string]string{labelApp: appName, LabelOrder: o.OrderID, LabelInstance: o.InstanceID}
	c := corev1.Container{Name: appName, Image: s.Image, Command: s.Command, Args: s.Args}
	for _, e := range s.Env {
		c.Env = append(c.Env, corev1.EnvVar{Name: e.Name, Value: e.Value})
	}
	for _, p := range s.Ports {
		c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: p.ContainerPort, Protocol: protocol(p)})
	}
	if r := s.Resources; r != nil {
		c.Resources = corev1.ResourceRequirements{Requests: quantities(r.Requests), Limits: quantities(r.Limits)}
	}
	return &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: appName}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{c}},
			},
		},
	}
}

// service is the ClusterIP Service of an exposed app's service ports; nil
// when there is none.
func service(s AppSpec, meta metav1.ObjectMeta) *corev1.Service {
	if s.Expose != "cluster" {
		return nil
	}
	var ports []corev1.ServicePort
	for _, p := range s.Ports {
		if p.ServicePort == 0 {
			continue
		}
		ports = append(ports, corev1.ServicePort{
			Name:       fmt.Sprintf("%s-%d", lower(protocol(p)), p.ServicePort),
			Port:       p.ServicePort,
			TargetPort: intstr.FromInt32(p.ContainerPort),
			Protocol:   protocol(p),
		})
	}
	if len(ports) == 0 {
		return nil
	}
	return &corev1.Service{
		TypeMeta:   typeMeta("v1", "Service"),
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{labelApp: appName},
			Ports:    ports,
		},
	}
}

// replicas is the spec's replica count, 1 by default.
func replicas(s AppSpec) int32 {
	if s.Replicas != nil {
		return *s.Replicas
	}
	return 1
}

// resourceObjects are the namespace's ResourceQuota (the app's requests and
// limits for each of its replicas and a rollout's surge: 25%, at least one)
// and LimitRange (the app's requests and limits as every container's
// default).
func resourceObjects(r Resources, replicas int32, meta metav1.ObjectMeta) (*corev1.ResourceQuota, *corev1.LimitRange, error) {
	pods := int64(replicas) + max(1, (int64(replicas)+3)/4)
	hard := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceLimitsCPU: r.Limits.CPU,
		corev1.ResourceLimitsMemory: r.Limits.Memory, corev1.ResourceRequestsCPU: r.Requests.CPU,
		corev1.ResourceRequestsMemory: r.Requests.Memory} {
		v, err := parseQuantity(q)
		if err != nil {
			return nil, nil, fmt.Errorf("kubeprovider: %s: %w", name, err)
		}
		if v != nil {
			v.Mul(pods)
			hard[name] = *v
		}
	}
	quota := &corev1.ResourceQuota{TypeMeta: typeMeta("v1", "ResourceQuota"), ObjectMeta: meta,
		Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	limits := &corev1.LimitRange{TypeMeta: typeMeta("v1", "LimitRange"), ObjectMeta: meta,
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type:           corev1.LimitTypeContainer,
			Default:        quantities(r.Limits),
			DefaultRequest: quantities(r.Requests),
		}}}}
	return quota, limits, nil
}

// quantities is q as a resource list; the spec was validated.
func quantities(q Quantities) corev1.ResourceList {
	out := corev1.ResourceList{}
	if q.CPU != "" {
		out[corev1.ResourceCPU] = resource.MustParse(q.CPU)
	}
	if q.Memory != "" {
		out[corev1.ResourceMemory] = resource.MustParse(q.Memory)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func protocol(p Port) corev1.Protocol { return corev1.Protocol(cmp.Or(p.Protocol, "TCP")) }

func lower(p corev1.Protocol) string {
	switch p {
	case corev1.ProtocolUDP:
		return "udp"
	case corev1.ProtocolSCTP:
		return "sctp"
	}
	return "tcp"
}
