// Package kubetest gives tests a real Kubernetes API server: Debian's etcd,
// kube-apiserver and kube-controller-manager (garbage collection and
// namespace deletion only; no kubelet or scheduler, so pods never run),
// started by scripts/kube-throwaway on 127.0.0.1. Production code never
// imports it.
//
// Starting a cluster takes seconds, so a test binary shares one: the first
// [Start] starts it, and the package's TestMain stops it after the tests:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		kubetest.StopShared()
//		os.Exit(code)
//	}
//
// Each [Start] gives its test a fresh namespace, deleted when the test ends,
// so tests that stay inside it may run in parallel. A test binary that dies
// before StopShared (a panic, a -timeout) does not leak the processes: the
// script stops them once the test binary has exited.
//
// Without the binaries (build them once with `scripts/kube-throwaway build`;
// the first build takes 5 to 10 minutes) or without etcd (apt-get install
// etcd-server), Start skips the test, or fails it when
// STEWARD_TEST_REQUIRE_KUBE=1, as CI sets.
package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RequireEnv is the environment variable that turns a missing cluster from a
// skip into a failure.
const RequireEnv = "STEWARD_TEST_REQUIRE_KUBE"

// startTimeout bounds `kube-throwaway start`; the script gives up on each
// process well before.
const startTimeout = 5 * time.Minute

// NamespaceGVR is the resource of namespaces, for the dynamic client.
var NamespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Cluster is the shared cluster as one test sees it.
type Cluster struct {
	// Kubeconfig is the path of an admin kubeconfig (system:masters).
	Kubeconfig string
	// Namespace is this test's own namespace; it exists when Start returns.
	Namespace string

	cfg *rest.Config
	dyn dynamic.Interface
}

// RESTConfig returns a copy of the admin client configuration, which the
// caller may change.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.cfg) }

// Dynamic returns a dynamic client with admin rights, shared by the tests.
func (c *Cluster) Dynamic() dynamic.Interface { return c.dyn }

// sharedCluster is a cluster this test binary shares between its tests.
type sharedCluster struct {
	// startArgs follow `kube-throwaway start DIR`.
	startArgs []string

	once sync.Once
	// Set by once:
	unavailable string // why there can be no cluster (binaries or etcd missing)
	err         error  // why starting it failed
	dir         string
	script      string
	kubeconfig  string
	cfg         *rest.Config
	dyn         dynamic.Interface

	mu      sync.Mutex
	stopped bool
}

// plain is the API server with garbage collection and namespace deletion;
// withPods also schedules pods onto simulated nodes that report them running.
// secondWithPods is another such cluster, for tests that need two.
var (
	plain          = &sharedCluster{}
	withPods       = &sharedCluster{startArgs: []string{"--pods"}}
	secondWithPods = &sharedCluster{startArgs: []string{"--pods"}}
)

// Start returns the shared cluster, starting it on first use, with a new
// namespace for tb that is deleted (best effort, without waiting) when tb
// ends. It skips tb when the cluster cannot exist here (see the package doc).
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	return plain.start(tb)
}

// StartWithPods is Start on a second shared cluster that also runs
// kube-scheduler, the workload controllers and kwok's simulated nodes
// (kwok-node-0 and kwok-node-1): a Deployment's pods are scheduled and
// reported running, though no container runs.
func StartWithPods(tb testing.TB) *Cluster {
	tb.Helper()
	return withPods.start(tb)
}

// StartSecondWithPods is StartWithPods on another cluster of its own: a
// test of something that spans two clusters (a provider per cluster) takes
// one of each.
func StartSecondWithPods(tb testing.TB) *Cluster {
	tb.Helper()
	return secondWithPods.start(tb)
}

func (shared *sharedCluster) start(tb testing.TB) *Cluster {
	tb.Helper()
	shared.mu.Lock()
	stopped := shared.stopped
	shared.mu.Unlock()
	if stopped {
		tb.Fatal("kubetest: Start after StopShared")
	}
	shared.once.Do(shared.startShared)
	if shared.unavailable != "" {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("kubetest: no Kubernetes API server (%s=1): %s", RequireEnv, shared.unavailable)
		}
		tb.Skipf("kubetest: no Kubernetes API server, skipping: %s", shared.unavailable)
	}
	if shared.err != nil {
		tb.Fatalf("kubetest: %v", shared.err)
	}
	c := &Cluster{Kubeconfig: shared.kubeconfig, cfg: shared.cfg, dyn: shared.dyn}
	c.Namespace = createNamespace(tb, c.dyn)
	return c
}

// StopShared stops the shared clusters that were started and removes their
// directories. Call it from TestMain after m.Run; it reports problems on
// stderr, since there is no test left to fail.
func StopShared() {
	plain.stop()
	withPods.stop()
	secondWithPods.stop()
}

func (shared *sharedCluster) stop() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.stopped {
		return
	}
	shared.stopped = true
	if shared.dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, shared.script, "stop", shared.dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "kubetest: kube-throwaway stop %s: %v\n%s", shared.dir, err, out)
		return
	}
	if err := os.RemoveAll(shared.dir); err != nil {
		fmt.Fprintf(os.Stderr, "kubetest: %v\n", err)
	}
}

// startShared fills in shared: unavailable, err, or a running cluster.
func (shared *sharedCluster) startShared() {
	script, err := findScript()
	if err != nil {
		shared.err = err
		return
	}
	shared.script = script
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()

	// check says what is missing, with how to get it, and exits 1.
	var stderr bytes.Buffer
	check := exec.CommandContext(ctx, script, "check")
	check.Stderr = &stderr
	if err := check.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			shared.unavailable = strings.TrimSpace(stderr.String())
		} else {
			shared.err = fmt.Errorf("%s check: %v\n%s", script, err, stderr.String())
		}
		return
	}

	dir, err := os.MkdirTemp("", "steward-kubetest-")
	if err != nil {
		shared.err = err
		return
	}
	shared.dir = dir
	stderr.Reset()
	start := exec.CommandContext(ctx, script, append([]string{"start", dir}, shared.startArgs...)...)
	start.Stderr = &stderr
	// If this binary dies before StopShared, the script stops the cluster.
	start.Env = append(os.Environ(), "STEWARD_KUBE_PARENT_PID="+strconv.Itoa(os.Getpid()))
	out, err := start.Output()
	if err != nil {
		shared.err = fmt.Errorf("%s start %s: %v\n%s", script, dir, err, stderr.String())
		return
	}
	shared.kubeconfig = strings.TrimSpace(string(out))
	cfg, err := clientcmd.BuildConfigFromFlags("", shared.kubeconfig)
	if err != nil {
		shared.err = fmt.Errorf("load %s: %w", shared.kubeconfig, err)
		return
	}
	// client-go's default (5 requests/s) would throttle parallel tests.
	cfg.QPS, cfg.Burst = 200, 400
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		shared.err = err
		return
	}
	shared.cfg, shared.dyn = cfg, dyn
}

// findScript walks up from the working directory (a test runs in its
// package's directory) to the repository's scripts/kube-throwaway.
func findScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "scripts", "kube-throwaway")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("scripts/kube-throwaway not found above the working directory")
		}
		dir = parent
	}
}

// createNamespace creates a namespace named after tb and deletes it when tb
// ends.
func createNamespace(tb testing.TB, dyn dynamic.Interface) string {
	tb.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]any{"generateName": namespacePrefix(tb.Name())},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	created, err := dyn.Resource(NamespaceGVR).Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		tb.Fatalf("kubetest: create a namespace: %v", err)
	}
	name := created.GetName()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := dyn.Resource(NamespaceGVR).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			tb.Logf("kubetest: delete namespace %s: %v", name, err)
		}
	})
	return name
}

// namespacePrefix turns a test name into a namespace generateName: a DNS
// label prefix of lower-case letters, digits and dashes, ending in a dash; the
// server appends five random characters.
func namespacePrefix(testName string) string {
	var b strings.Builder
	dash := true // no leading dash, no double dashes
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 50 {
			break
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 50 {
		s = strings.TrimRight(s[:50], "-")
	}
	if s == "" {
		s = "test"
	}
	return s + "-"
}

// LeakOptions are the goroutines a test binary that used the cluster may
// leave behind and goleak should ignore: client-go keeps connections to the
// API server alive, and klog runs a flush daemon; neither is ours to stop.
func LeakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*clientConnReadLoop).run"),
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
	}
}
