package pgprovider_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/crashtest"
	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// The real `steward provider postgres` is killed with SIGKILL again and
// again while orders of postgres-small are placed on it, and restarted at
// once on the same port and key. Once the load stops, every order must be
// up on exactly one database of its own, and no database or role the
// provider marked may be left over: a create cut anywhere (before the
// role, between the role and the database, before the mark, before the
// answer) is finished by the next attempt, never made twice.
func TestCrash_ProviderKilledDuringCreates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	t.Parallel()
	adminURL := os.Getenv(storetest.EnvDatabaseURL)
	if adminURL == "" {
		t.Skipf("%s is not set", storetest.EnvDatabaseURL)
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
	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider = true }) // seeds postgres-small
	urlFile := filepath.Join(dir, "admin-url")
	if err := os.WriteFile(urlFile, []byte(adminURL), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	var proc *exec.Cmd
	var kills int
	startProvider := func() {
		log, err := os.OpenFile(filepath.Join(dir, "provider.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		proc = exec.Command(bin, "provider", "postgres", "--admin-url-file", urlFile, "--secret-file", filepath.Join(dir, "key"),
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
		return s.Do(t, "GET", "/api/v1/providers/postgres-sp", nil).Status == http.StatusOK
	})

	admin, err := pgx.Connect(t.Context(), adminURL)
	if err != nil {
		t.Fatal(err)
	}
	prefix := unique("crash")
	t.Cleanup(func() { dropAll(admin, prefix) })

	const orders, clients, rounds = 24, 4, 8
	killed := make(chan struct{})
	go func() { // kill and restart at random moments while the orders are placed and provisioned
		defer close(killed)
		for range rounds {
			select {
			case <-t.Context().Done():
				return
			case <-time.After(time.Duration(20+rand.IntN(300)) * time.Millisecond):
			}
			killProvider()
			startProvider()
		}
	}()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; i < orders; i += clients {
				body := map[string]any{"catalog_item_id": "postgres-small",
					"user_values": []map[string]any{{"path": "database", "value": fmt.Sprintf("%s_%d", prefix, i)}}}
				path := fmt.Sprintf("/api/v1/catalog-item-instances?id=o-%d", i)
				// 503 while the provider is not known healthy (its restart
				// is checked at the next health pass, up to 5 s away, longer
				// under CI's load): asked again, under a new key, since a
				// key's replay is its first answer whatever its status.
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

	instances := map[string]bool{}
	var notUp []string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("orders not up: %v", notUp)
			if b, err := os.ReadFile(filepath.Join(dir, "provider.log")); err == nil {
				t.Logf("the provider's log:\n%s", b)
			}
			t.Logf("the provider as Steward sees it: %s", s.Do(t, "GET", "/api/v1/providers/postgres-sp", nil).Body)
			rows, err := s.DB().Query(context.Background(), "SELECT id, kind, state, attempt, scheduled_at FROM river_job ORDER BY id")
			if err != nil {
				t.Logf("river jobs: %v", err)
				return
			}
			defer rows.Close()
			for rows.Next() {
				var id, attempt int64
				var kind, state string
				var at time.Time
				if err := rows.Scan(&id, &kind, &state, &attempt, &at); err == nil {
					t.Logf("river job %d %s %s attempt %d scheduled %s", id, kind, state, attempt, at.Format(time.RFC3339Nano))
				}
			}
		}
	})
	poll.UntilWithin(t, 2*time.Minute, "every order is up", func() bool {
		notUp = nil
		for i := range orders {
			var got struct {
				State      string `json:"state"`
				InstanceID string `json:"instance_id"`
			}
			s.Do(t, "GET", fmt.Sprintf("/api/v1/catalog-item-instances/o-%d", i), nil).Want(t, http.StatusOK).JSON(t, &got)
			if got.State != "up" {
				notUp = append(notUp, fmt.Sprintf("o-%d %s %s", i, got.State, got.InstanceID))
			}
			instances[got.InstanceID] = true
		}
		return len(notUp) == 0
	})
	// Instances given up on and recreated are deleted by the cleanup
	// queue: what stays marked is the orders' own, once each.
	poll.UntilWithin(t, time.Minute, "one marked database and role per order, nothing else", func() bool {
		dbs := marked(t, admin, "pg_database", "SELECT datname, oid FROM pg_database", prefix)
		roles := marked(t, admin, "pg_authid", "SELECT rolname, oid FROM pg_roles", prefix)
		for _, m := range []map[string]string{dbs, roles} {
			if len(m) != orders {
				return false
			}
			for _, inst := range m {
				if !instances[inst] {
					return false
				}
			}
		}
		return true
	})
}

// marked returns the objects of a catalog whose name starts with prefix,
// with the instance id in each one's mark.
func marked(t *testing.T, admin *pgx.Conn, catalog, list, prefix string) map[string]string {
	t.Helper()
	rows, err := admin.Query(t.Context(), `SELECT o.name, COALESCE(c.description, '') FROM (`+list+`) AS o(name, oid)
		LEFT JOIN pg_shdescription c ON c.objoid = o.oid AND c.classoid = '`+catalog+`'::regclass
		WHERE starts_with(o.name, $1)`, prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, mark string
		if err := rows.Scan(&name, &mark); err != nil {
			t.Fatal(err)
		}
		// A database's mark goes on with the spec it keeps.
		out[name], _, _ = strings.Cut(strings.TrimPrefix(mark, "steward-instance:"), " ")
	}
	return out
}

// dropAll drops the databases and roles whose names start with prefix.
func dropAll(admin *pgx.Conn, prefix string) {
	ctx := context.Background()
	defer admin.Close(ctx)
	for _, q := range []string{"SELECT datname FROM pg_database", "SELECT rolname FROM pg_roles"} {
		rows, err := admin.Query(ctx, q)
		if err != nil {
			return
		}
		var names []string
		for rows.Next() {
			var n string
			if rows.Scan(&n) == nil && strings.HasPrefix(n, prefix) {
				names = append(names, n)
			}
		}
		rows.Close()
		for _, n := range names {
			if strings.HasPrefix(q, "SELECT datname") {
				_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{n}.Sanitize()+" WITH (FORCE)")
			} else {
				_, _ = admin.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{n}.Sanitize())
			}
		}
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
