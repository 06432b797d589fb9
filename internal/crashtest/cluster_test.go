package crashtest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// TestCluster is issue 28's proof: three replicas on one PostgreSQL and a
// three-node NATS JetStream cluster (separate processes, Steward's stream on
// R3), a provider and `steward adapter` (on a test Kubernetes API server),
// 2,000 orders with updates, rehydrations, rotations and deletes sent over
// all three, one in sixteen of a type the adapter must report on; meanwhile River's leader replica is killed (SIGKILL), then
// the NATS node leading the stream, then another replica is stopped with
// SIGTERM, each started again. Every invariant of TestCrash must hold, and:
// the dead replica's work and the leadership move within 30s (the times,
// aimed under 5s, are in the report and BENCHMARKS.md), no periodic job or
// sentinel cycle runs twice at once, no event is lost from the
// outbox or in the stream twice, no instance is made twice.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three servers and three NATS nodes under load for a minute; skipped with -short")
	}
	base := os.Getenv(storetest.EnvDatabaseURL)
	if base == "" {
		t.Skip("replicas need a shared store: set " + storetest.EnvDatabaseURL)
	}
	bin := binary(t)
	natsBin := filepath.Join(filepath.Dir(bin), "nats-server")
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	root, err := ModuleDir(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	if err := BuildNATSServer(ctx, root, natsBin); err != nil {
		t.Fatal(err)
	}
	kube := kubetest.Start(t)
	// The trial's logs (three replicas, three NATS nodes, the adapter) stay
	// for a failure to be read.
	dir, err := os.MkdirTemp("", "steward-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	cfg := Config{Binary: bin, NATSServer: natsBin, DatabaseURL: base, Replicas: 3, Orders: 2000, Clients: 12,
		Kubeconfig: kube.Kubeconfig, AdapterConfig: filepath.Join(root, "examples", "adapters", "cluster-namespace.yaml"),
		Dir: dir, DrainDelay: 500 * time.Millisecond, SettleTimeout: 3 * time.Minute,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))}
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("trial could not run: %v\n%s\nlog tails:\n%s", err, rep, rep.LogTail(20))
	}
	if !rep.Pass {
		t.Fatalf("%s\nlog tails:\n%s", rep, rep.LogTail(20))
	}
	// River's leader was killed while orders still came: another replica's
	// sentinel must have taken the cycles over.
	if rep.Counts.SentinelReplicas < 2 {
		t.Errorf("the sentinel cycles ran on %d replicas, want the killed leader's and its successor's", rep.Counts.SentinelReplicas)
	}
	t.Log(rep)
}
