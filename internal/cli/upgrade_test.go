package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/crashtest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// Issue 28, expand/contract: the build before the newest migration (N) and
// this one (N+1) run side by side on one PostgreSQL database, as during a
// rolling upgrade. N+1 migrates the schema while N serves; N then goes on
// taking orders, its jobs and N+1's run on either replica (one River
// queue), each serves what the other made, and N restarts on the migrated
// schema. A migration that drops or renames what N uses fails here.
func TestUpgrade_PreviousBuildRunsBesideThisOneOnItsSchema(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.EnvDatabaseURL) == "" && os.Getenv(storetest.EnvRequirePostgres) != "1" {
		t.Skipf("%s is not set: two replicas share a database only on PostgreSQL", storetest.EnvDatabaseURL)
	}
	newBin := stewardBinary(t)
	oldBin, oldCommit, newest := previousBuild(t)
	dbURL := storetest.NewSchemaURL(t)
	base := t.TempDir()

	oldSrv, oldLog := startServer(t, oldBin, replicaArgs(dbURL, filepath.Join(base, "old"))...)
	oldURL := servingURL(t, oldLog)
	code, stdout, _ := runSteward(t, newBin, "migrate", "--check", "--database-url", dbURL)
	if code != 1 || !strings.Contains(stdout, "pending steward "+newest) {
		t.Fatalf("migrate --check after N (%s) migrated: exit %d, stdout %q; want %s pending", oldCommit, code, stdout, newest)
	}

	prov := newRunningProvider(t)
	post(t, oldURL, "/api/v1/providers", map[string]any{"name": "upgrade-sp", "endpoint": prov.url, "service_types": []string{"container"}})
	post(t, oldURL, "/api/v1/catalog-items?id=app", map[string]any{"display_name": "app", "service_type": "container",
		"defaults": map[string]any{"process": map[string]any{"command": []string{"sleep"}, "args": []string{"3600"}}}})
	waitUp(t, oldURL, post(t, oldURL, "/api/v1/catalog-item-instances?id=before", map[string]any{"catalog_item_id": "app"}))

	_, newLog := startServer(t, newBin, replicaArgs(dbURL, filepath.Join(base, "new"))...)
	newURL := servingURL(t, newLog)
	if code, stdout, _ = runSteward(t, newBin, "migrate", "--check", "--database-url", dbURL); code != 0 {
		t.Fatalf("migrate --check once N+1 started: exit %d, stdout %q", code, stdout)
	}

	for i := range 4 { // both replicas take orders, and run each other's jobs
		for _, u := range []string{oldURL, newURL} {
			waitUp(t, u, post(t, u, fmt.Sprintf("/api/v1/catalog-item-instances?id=o%d-%s", i, port(u)), map[string]any{"catalog_item_id": "app"}))
		}
	}
	for _, u := range []string{oldURL, newURL} {
		for _, id := range []string{"before", fmt.Sprintf("o0-%s", port(oldURL)), fmt.Sprintf("o0-%s", port(newURL))} {
			if st := orderState(t, u, id); st != "up" {
				t.Errorf("GET %s through %s: state %q, want up", id, u, st)
			}
		}
	}
	_, instance := getOrder(t, newURL, "before")
	if !prov.holds(instance) {
		t.Fatalf("the provider does not hold instance %q of order before", instance)
	}
	del(t, newURL, "/api/v1/catalog-item-instances/before")
	poll.Until(t, "the order N made, deleted through N+1, is gone from the provider", func() bool { return !prov.holds(instance) })

	stopServer(t, oldSrv)
	_, oldLog = startServer(t, oldBin, replicaArgs(dbURL, filepath.Join(base, "old"))...)
	oldURL = servingURL(t, oldLog)
	waitUp(t, oldURL, post(t, oldURL, "/api/v1/catalog-item-instances?id=after-restart", map[string]any{"catalog_item_id": "app"}))
	if st := orderState(t, oldURL, fmt.Sprintf("o3-%s", port(newURL))); st != "up" {
		t.Errorf("N restarted on N+1's schema: GET of an order N+1 made: state %q, want up", st)
	}
}

// replicaArgs starts a server of a two-replica install on dbURL.
func replicaArgs(dbURL, dataDir string) []string {
	return []string{"server", "--dev", "--process-provider=false", "--database-url", dbURL, "--data-dir", dataDir,
		"--listen", "127.0.0.1:0", "--health-interval", "1s"}
}

// previousBuild builds the parent of the commit that added the newest
// migration (N) and returns its binary, that commit, and the migration's
// version as `steward migrate` prints it ("00039").
func previousBuild(t *testing.T) (bin, commit, newest string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	root, err := crashtest.ModuleDir(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %s: %v (a full clone is needed: the test builds an older commit)", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	if git("rev-parse", "--is-shallow-repository") == "true" {
		t.Skip("a shallow clone: the build before the newest migration is not in it")
	}
	// The newest migration in the tree, and the last commit that added it:
	// history may hold a later commit adding one a revert took out again.
	files, err := filepath.Glob(filepath.Join(root, "internal/store/migrations/postgres", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no PostgreSQL migrations in the tree: %v", err)
	}
	slices.Sort(files)
	added := git("log", "-n1", "--diff-filter=A", "--format=%H", "--", files[len(files)-1])
	if added == "" {
		t.Fatalf("no commit adds %s", files[len(files)-1])
	}
	newest, _, _ = strings.Cut(filepath.Base(files[len(files)-1]), "_")
	commit = git("rev-parse", "--short", added+"^")

	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.CommandContext(ctx, "git", "-C", root, "archive", commit)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", src)
	untar.Stdin, _ = archive.StdoutPipe()
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v", commit, err)
	}
	if err := untar.Wait(); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(t.TempDir(), "steward-"+commit)
	if err := crashtest.Build(ctx, src, bin); err != nil {
		t.Fatalf("build %s: %v", commit, err)
	}
	return bin, commit, newest
}

// runningProvider answers every create RUNNING at once, in memory.
type runningProvider struct {
	url string
	mu  sync.Mutex
	ids map[string]bool
}

func newRunningProvider(t *testing.T) *runningProvider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &runningProvider{url: "http://" + ln.Addr().String(), ids: map[string]bool{}}
	srv := &http.Server{Handler: provider.NewServer(p, provider.ServerConfig{}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

func (p *runningProvider) Create(_ context.Context, req provider.CreateRequest) (provider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids[req.InstanceID] = true
	return provider.Instance{InstanceID: req.InstanceID, Status: provider.StatusRunning}, nil
}

func (p *runningProvider) Get(_ context.Context, id string) (provider.Instance, error) {
	if !p.holds(id) {
		return provider.Instance{}, provider.ErrNotFound
	}
	return provider.Instance{InstanceID: id, Status: provider.StatusRunning}, nil
}

func (p *runningProvider) Delete(_ context.Context, id string) (provider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ids[id] {
		return provider.Instance{}, provider.ErrNotFound
	}
	delete(p.ids, id)
	return provider.Instance{InstanceID: id, Status: provider.StatusDeleted}, nil
}

func (p *runningProvider) Health(context.Context) error { return nil }

func (p *runningProvider) holds(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ids[id]
}

// post sends body as JSON, wants a 2xx, and returns the answer's id.
func post(t *testing.T, base, path string, body any) string {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(base+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST %s%s: %v", base, path, err)
	}
	defer resp.Body.Close()
	var out struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if resp.StatusCode/100 != 2 {
		var problem bytes.Buffer
		_, _ = problem.ReadFrom(resp.Body)
		t.Fatalf("POST %s%s: %d %s", base, path, resp.StatusCode, problem.String())
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out.ID
}

func del(t *testing.T, base, path string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, base+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("DELETE %s%s: %v", base, path, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE %s%s: %d", base, path, resp.StatusCode)
	}
}

// getOrder is an order's state and current instance as base answers them
// ("" when not found).
func getOrder(t *testing.T, base, id string) (state, instance string) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/catalog-item-instances/" + id)
	if err != nil {
		t.Fatalf("GET order %s: %v", id, err)
	}
	defer resp.Body.Close()
	var o struct {
		State      string `json:"state"`
		InstanceID string `json:"instance_id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&o)
	return o.State, o.InstanceID
}

func orderState(t *testing.T, base, id string) string {
	t.Helper()
	state, _ := getOrder(t, base, id)
	return state
}

func waitUp(t *testing.T, base, id string) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("order %s is up (through %s)", id, base), func() bool { return orderState(t, base, id) == "up" })
}

// port is a base URL's port, to name what each replica made.
func port(base string) string {
	_, p, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	return p
}
