package crashtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store/storetest"
)

// replicas starts real `steward server` processes that share one
// PostgreSQL schema, for the tests of what survives one of them dying.
type replicas struct {
	t     *testing.T
	bin   string
	dbURL string
	dir   string
	hc    *http.Client
}

// newReplicas builds the binary and a schema of the test's own; it skips
// the test with -short or without a PostgreSQL server.
func newReplicas(t *testing.T) *replicas {
	t.Helper()
	if testing.Short() {
		t.Skip("starts and kills real servers; skipped with -short")
	}
	base := os.Getenv(storetest.EnvDatabaseURL)
	if base == "" {
		t.Skip("several processes need a shared store: set " + storetest.EnvDatabaseURL)
	}
	bin := binary(t)
	dbURL, drop, err := newSchema(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return &replicas{t: t, bin: bin, dbURL: dbURL, dir: t.TempDir(), hc: &http.Client{Timeout: 5 * time.Second}}
}

// freePort is a free port on 127.0.0.1, or the test fails.
func (r *replicas) freePort() int {
	r.t.Helper()
	p, err := FreePort()
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// start starts replica name with the extra flags, stopped at cleanup, and
// waits until it answers.
func (r *replicas) start(name string, extra ...string) *serverProc {
	r.t.Helper()
	s := newServerProc(serverParams{bin: r.bin, dataDir: filepath.Join(r.dir, name), databaseURL: r.dbURL,
		logPath: filepath.Join(r.dir, name+".log"), port: r.freePort(), extra: extra})
	if err := s.start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { s.stop(5 * time.Second) })
	if _, err := s.waitReady(r.t.Context(), 30*time.Second); err != nil {
		r.t.Fatal(err)
	}
	return s
}

// call sends a JSON request to s (with an Idempotency-Key unless key is
// ""); status 0 is no answer.
func (r *replicas) call(s *serverProc, method, path, key string, body any) (int, map[string]any) {
	r.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(r.t.Context(), method, s.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
