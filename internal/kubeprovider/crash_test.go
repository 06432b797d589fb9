package kubeprovider_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/stewardhq/steward/internal/crashtest"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/kubeprovider"
	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
)

// The real `steward provider kubernetes` is killed with SIGKILL again and
// again while orders of web-app are placed on it, and restarted at once on
// the same port. Once the load stops, every acknowledged order must be up,
// and the cluster must hold exactly one namespace per order, its current
// instance's: a create cut anywhere (before the namespace, between two
// objects, before the answer) is finished by the next attempt's apply,
// never made twice.
func TestCrash_ProviderKilledDuringCreates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	t.Parallel()
	c := kubetest.StartWithPods(t)
	kube, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	moduleDir, err := crashtest.ModuleDir(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "steward")
	if err := crashtest.Build(t.Context(), moduleDir, bin); err != nil {
		t.Fatal(err)
	}
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider = true }) // seeds web-app
	port := freePort(t)
	name := "kube-crash"
	var proc *exec.Cmd
	var kills int
	startProvider := func() {
		log, err := os.OpenFile(filepath.Join(dir, "provider.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		proc = exec.Command(bin, "provider", "kubernetes", "--kubeconfig", c.Kubeconfig, "--name", name,
			"--listen", fmt.Sprintf("127.0.0.1:%d", port), "--steward-url", s.URL(), "--log-level", "debug")
		proc.Stdout, proc.Stderr = log, log
		if err := proc.Start(); err != nil {
			t.Fatal(err)
		}
	}
	killProvider := func() {
		_ = proc.Process.Signal(syscall.SIGKILL)
		_ = proc.Wait()
		kills++
	}
	startProvider()
	t.Cleanup(func() {
		_ = proc.Process.Signal(syscall.SIGTERM)
		_ = proc.Wait()
	})
	poll.Until(t, "the provider registers", func() bool {
		return s.Do(t, "GET", "/api/v1/providers/"+name, nil).Status == http.StatusOK
	})

	prefix := uniqueID(t)
	const orders, clients, rounds = 16, 4, 6
	killed := make(chan struct{})
	go func() { // kill and restart at random moments while the orders are placed and rolled out
		defer close(killed)
		for range rounds {
			select {
			case <-t.Context().Done():
				return
			case <-time.After(time.Duration(50+rand.IntN(400)) * time.Millisecond):
			}
			killProvider()
			startProvider()
		}
	}()
	var wg sync.WaitGroup
	for cl := range clients {
		wg.Go(func() {
			for i := cl; i < orders; i += clients {
				body := map[string]any{"catalog_item_id": "web-app",
					"user_values": []map[string]any{{"path": "replicas", "value": 1 + i%3}}}
				path := fmt.Sprintf("/api/v1/catalog-item-instances?id=%s-%d", prefix, i)
				// 503 while the provider is not known healthy after a
				// restart: asked again under a new key.
				deadline := time.Now().Add(time.Minute)
				for attempt := 0; ; attempt++ {
					r := s.Do(t, "POST", path, body, "Idempotency-Key", fmt.Sprintf("%s-%d-%d", prefix, i, attempt))
					if r.Status == http.StatusCreated {
						break
					}
					if r.Status != http.StatusServiceUnavailable || time.Now().After(deadline) {
						t.Errorf("order %d: %d %s", i, r.Status, r.Body)
						return
					}
					select {
					case <-t.Context().Done():
						return
					case <-time.After(100 * time.Millisecond):
					}
				}
			}
		})
	}
	wg.Wait()
	<-killed
	t.Logf("%d orders placed through %d kills of the provider", orders, kills)

	current := map[string]string{} // order id → instance id
	var notUp []string
	t.Cleanup(func() {
		for _, inst := range current {
			_ = kube.CoreV1().Namespaces().Delete(context.Background(), kubeprovider.Namespace(inst), metav1.DeleteOptions{})
		}
		if t.Failed() {
			t.Logf("orders not up: %v", notUp)
			if b, err := os.ReadFile(filepath.Join(dir, "provider.log")); err == nil {
				t.Logf("the provider's log:\n%s", b)
			}
		}
	})
	poll.UntilWithin(t, 2*time.Minute, "every order is up", func() bool {
		notUp = nil
		for i := range orders {
			id := fmt.Sprintf("%s-%d", prefix, i)
			var got struct {
				State      string `json:"state"`
				InstanceID string `json:"instance_id"`
			}
			s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id, nil).Want(t, http.StatusOK).JSON(t, &got)
			if got.State != "up" {
				notUp = append(notUp, id+" "+got.State)
			}
			current[id] = got.InstanceID
		}
		return len(notUp) == 0
	})
	// Instances given up on and recreated are deleted by the cleanup
	// queue: what stays is one namespace per order, its current instance's.
	var extra []string
	poll.UntilWithin(t, time.Minute, "one namespace per order, its current instance's", func() bool {
		list, err := kube.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{LabelSelector: kubeprovider.LabelOrder})
		if err != nil {
			t.Fatal(err)
		}
		extra = nil
		held := map[string]int{}
		for _, ns := range list.Items {
			order := ns.Labels[kubeprovider.LabelOrder]
			if _, ours := current[order]; !ours {
				continue // another test's
			}
			held[order]++
			if ns.Labels[kubeprovider.LabelInstance] != current[order] || ns.DeletionTimestamp != nil {
				extra = append(extra, ns.Name+" of "+order)
			}
		}
		for order := range current {
			if held[order] != 1 {
				return false
			}
		}
		return len(extra) == 0
	})
	if len(extra) > 0 {
		t.Errorf("namespaces that are no order's current instance's: %v", extra)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
