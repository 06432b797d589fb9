package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stewardhq/steward/internal/crashtest"
	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/poll"
)

// Issue 26: the README's "Applications on Kubernetes" walkthrough, run as
// it is written against the real binary, the tests' cluster with pods
// (kube-throwaway --pods) and the Kubernetes provider: an order of web-app
// that is up with its outputs, a restart that rolls out new pods, and a
// delete that removes the namespace. The cluster is checked with
// client-go.
//
// What the test changes, and only in how the commands reach each other:
// /tmp/ is a directory of the test's; the server and the provider listen
// on 127.0.0.1:0, and the others (the provider too) find the server
// through STEWARD_SERVER.
func TestReadme_KubernetesWalkthrough(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	moduleDir, err := crashtest.ModuleDir(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(filepath.Join(moduleDir, "scripts/kube-throwaway"), "check").CombinedOutput(); err != nil {
		if os.Getenv(kubetest.RequireEnv) == "1" {
			t.Fatalf("no Kubernetes binaries: %s", out)
		}
		t.Skipf("no Kubernetes binaries: %s", out)
	}
	steps := walkthroughSteps(t, readmeBlock(t, moduleDir, "TestReadme_KubernetesWalkthrough"), "steward", "scripts/kube-throwaway")
	bin := stewardBinary(t)
	dir := t.TempDir()
	env := append(stewardEnv(), "HOME="+filepath.Join(dir, "home"), "STEWARD_DATA_DIR="+filepath.Join(dir, "data"),
		"STEWARD_LISTEN=127.0.0.1:0", "STEWARD_KUBE_PARENT_PID="+strconv.Itoa(os.Getpid()))
	// The binaries are in the user's cache, not the test's HOME.
	cache := os.Getenv("STEWARD_KUBE_CACHE")
	if cache == "" {
		userCache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(userCache, "steward", "kube")
	}
	env = append(env, "STEWARD_KUBE_CACHE="+cache)

	var server string
	var kube kubernetes.Interface
	namespace := func() string { // the order's namespace, from its instance id
		var o struct {
			InstanceID string `json:"instance_id"`
		}
		getJSON(t, server+"/api/v1/catalog-item-instances/shop?show_deleted=true", &o)
		return "steward-" + o.InstanceID
	}
	var ns string
	saw := map[string]bool{}
	for _, st := range steps {
		args := append([]string{}, st.args...)
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "/tmp/", dir+"/")
		}
		sub := args[1]
		if args[0] == "steward" {
			args[0] = bin
		}
		saw[st.args[0]+" "+sub] = true
		switch {
		case st.args[0] == "steward" && sub == "server":
			log := startBackground(t, env, moduleDir, args)
			server = serverURL(t, log)
			env = append(env, "STEWARD_SERVER="+server)
		case st.args[0] == "steward" && sub == "provider":
			startBackground(t, env, moduleDir, args)
			poll.Until(t, "the kubernetes provider is registered", func() bool {
				r, err := http.Get(server + "/api/v1/providers/kubernetes-sp")
				if err != nil {
					return false
				}
				r.Body.Close()
				return r.StatusCode == http.StatusOK
			})
		case st.args[0] == "scripts/kube-throwaway" && sub == "start":
			stop := exec.Command("scripts/kube-throwaway", "stop", args[2])
			stop.Dir, stop.Env = moduleDir, env
			t.Cleanup(func() { _ = stop.Run() })
			runWalkthroughStep(t, env, moduleDir, st.line, args)
			cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(args[2], "kubeconfig"))
			if err != nil {
				t.Fatal(err)
			}
			if kube, err = kubernetes.NewForConfig(cfg); err != nil {
				t.Fatal(err)
			}
		default:
			var rsBefore int
			if sub == "restart" {
				rsBefore = countReplicaSets(t, kube, ns)
			}
			stdout, stderr := runWalkthroughStep(t, env, moduleDir, st.line, args)
			switch {
			case sub == "order":
				if !strings.Contains(stderr, "up") {
					t.Errorf("%s: no progress line reaching up:\n%s", st.line, stderr)
				}
				ns = namespace()
				d, err := kube.AppsV1().Deployments(ns).Get(t.Context(), "app", metav1.GetOptions{})
				if err != nil || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" || d.Status.ReadyReplicas != 2 {
					t.Errorf("after %s: deployment %v (%v); want nginx:1.28 with 2 ready replicas", st.line, d, err)
				}
			case sub == "describe" && !regexp.MustCompile(`(?m)^\s+service_host: app\.`+ns+`\.svc\.cluster\.local$`).MatchString(stdout):
				t.Errorf("%s shows no output service_host of namespace %s:\n%s", st.line, ns, stdout)
			case sub == "restart":
				if n := countReplicaSets(t, kube, ns); n != rsBefore+1 {
					t.Errorf("after %s: %d ReplicaSets, want %d", st.line, n, rsBefore+1)
				}
			case sub == "delete":
				if _, err := kube.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err == nil {
					t.Errorf("after %s the namespace %s is still there", st.line, ns)
				}
			}
		}
	}
	for _, step := range []string{"steward server", "scripts/kube-throwaway start", "steward provider", "steward order",
		"steward describe", "steward restart", "steward delete", "scripts/kube-throwaway stop"} {
		if !saw[step] {
			t.Errorf("the walkthrough lacks a %s step", step)
		}
	}
}

func countReplicaSets(t *testing.T, kube kubernetes.Interface, ns string) int {
	t.Helper()
	list, err := kube.AppsV1().ReplicaSets(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// getJSON decodes the answer of a GET that must be 200.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, r.Status)
	}
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
