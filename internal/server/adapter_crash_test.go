package server_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stewardhq/steward/internal/crashtest"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// The real `steward adapter` binary, killed with SIGKILL in the middle of a
// deletion (its first delete done, the namespace not yet), and started
// again: the new process picks the deletion up from the durable consumer
// and the sentinel's next event, finishes it, and the order is removed.
func TestAdapter_ProcessKilledMidDeletionResumes(t *testing.T) {
	t.Parallel()
	cluster := kubetest.Start(t)
	ctx := context.Background()
	moduleDir, err := crashtest.ModuleDir(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "steward")
	if err := crashtest.Build(ctx, moduleDir, bin); err != nil {
		t.Fatal(err)
	}
	s := apitest.Start(t, store.SQLite, apitest.Fast, func(c *server.Config) {
		c.SentinelInterval, c.SentinelDebounce, c.NATSListen = 50*time.Millisecond, 300*time.Millisecond, "127.0.0.1:0"
	})
	p := typeWithAdapter(t, s, "kcrash", "cluster-namespace")

	example, err := os.ReadFile(filepath.Join(moduleDir, "examples", "adapters", "cluster-namespace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ownType := strings.Replace(string(example), "service_types: [namespaced-process]", "service_types: [kcrash]", 1)
	if ownType == string(example) {
		t.Fatal("the example adapter no longer says service_types: [namespaced-process]")
	}
	config := filepath.Join(t.TempDir(), "adapter.yaml")
	if err := os.WriteFile(config, []byte(ownType), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "adapter", "--config", config, "--server", s.URL(), "--nats-url", s.NATSURL(),
			"--kubeconfig", cluster.Kubeconfig)
		cmd.Env = append(os.Environ(), "NS_PREFIX=crash")
		cmd.Stdout, cmd.Stderr = t.Output(), t.Output()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}

	var o struct {
		State      string
		InstanceID string `json:"instance_id"`
		Conditions []struct{ Type, Status string }
	}
	get := func() { s.Do(t, "GET", "/api/v1/catalog-item-instances/c1", nil).Want(t, http.StatusOK).JSON(t, &o) }
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=c1", map[string]any{"catalog_item_id": "kcrash"}).Want(t, http.StatusCreated)
	poll(t, "the provider got the order", func() bool { get(); return o.InstanceID != "" })
	p.WaitForCall(t, providertest.MethodCreate, o.InstanceID)
	s.ReportStatus(t, o.InstanceID, "RUNNING")
	first := start()
	poll(t, "the order is Ready", func() bool { get(); return len(o.Conditions) > 0 && o.Conditions[0].Status == "True" })

	dyn := cluster.Dynamic()
	s.Do(t, "DELETE", "/api/v1/catalog-item-instances/c1", nil).Want(t, http.StatusAccepted)
	// The namespace goes last (after: [values, credentials]): once the
	// values ConfigMap is gone, the deletion is under way and not done.
	poll(t, "the adapter deleted its ConfigMap", func() bool {
		_, err := dyn.Resource(configMapGVR).Namespace("crash-c1").Get(ctx, "order-values", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	get()
	if o.State == "terminated" {
		t.Fatal("the deletion finished before the kill; nothing was resumed")
	}

	start()
	poll(t, "the restarted adapter finished the deletion and the order is removed", func() bool {
		get()
		return o.State == "terminated"
	})
	poll(t, "the namespace is gone", func() bool {
		_, err := dyn.Resource(kubetest.NamespaceGVR).Get(ctx, "crash-c1", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	_ = dyn.Resource(configMapGVR).Namespace("default").Delete(ctx, "steward-order-c1", metav1.DeleteOptions{})
}
