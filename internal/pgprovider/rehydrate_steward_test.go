package pgprovider_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/pgprovider"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/providerhost"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// throwaway is a PostgreSQL server of the test's own (scripts/pg-throwaway),
// which it may kill.
type throwaway struct {
	dir string
	url string // the superuser's
}

func startThrowaway(t testing.TB) *throwaway {
	t.Helper()
	// The cluster runs as postgres when the tests run as root: its
	// directory must be reachable by it.
	dir, err := os.MkdirTemp("", "steward-pg-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pg := &throwaway{dir: dir}
	out, err := pg.script("start").Output()
	if err != nil {
		t.Fatalf("pg-throwaway start: %v: %s", err, stderrOf(err))
	}
	t.Cleanup(func() {
		_ = pg.script("stop").Run()
		_ = os.RemoveAll(dir)
	})
	pg.url = strings.TrimSpace(string(out))
	return pg
}

func (pg *throwaway) script(cmd string) *exec.Cmd {
	return exec.Command(filepath.Join("..", "..", "scripts", "pg-throwaway"), cmd, pg.dir)
}

func (pg *throwaway) run(t testing.TB, cmd string) {
	t.Helper()
	if out, err := pg.script(cmd).CombinedOutput(); err != nil {
		t.Fatalf("pg-throwaway %s: %v: %s", cmd, err, out)
	}
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// rehydration is a Steward with two postgres providers: "pg-old" on a
// throwaway server holding order "app" with 10,000 rows, and "pg-new" on
// the test server, registered after the order was placed.
type rehydration struct {
	s        *apitest.Server
	old      *throwaway
	oldAdmin *pgx.Conn // the old server's superuser
	newAdmin *pgx.Conn
	database string
	appURL   string // the owner's, on the old server
}

func setUpRehydration(t testing.TB, engine store.Engine, adjust ...func(*server.Config)) *rehydration {
	adminURL := os.Getenv(storetest.EnvDatabaseURL)
	var logs apitest.Buffer
	logTo := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := apitest.Start(t, engine, append([]func(*server.Config){func(c *server.Config) { c.ProcessProvider, c.Logger = true, logTo }},
		adjust...)...)
	old := startThrowaway(t)
	startProvider(t, s, adminRole(t, old.url, "pw-"+unique("old")), logTo, pgprovider.DaemonConfig{
		Settings: providerhost.Settings{Name: "pg-old", Labels: map[string]string{"region": "us"}}, ObserveInterval: -1})
	r := &rehydration{s: s, old: old, database: unique("app")}
	var err error
	if r.oldAdmin, err = pgx.Connect(t.Context(), old.url); err != nil {
		t.Fatal(err)
	}
	if r.newAdmin, err = pgx.Connect(t.Context(), adminURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = r.newAdmin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+r.database+" WITH (FORCE)")
		_, _ = r.newAdmin.Exec(context.Background(), "DROP ROLE IF EXISTS "+r.database)
		r.newAdmin.Close(context.Background())
		r.oldAdmin.Close(context.Background())
	})
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=app", map[string]any{"catalog_item_id": "postgres-small",
		"user_values": []map[string]any{{"path": "database", "value": r.database},
			{"path": "extensions", "value": []string{"pg_trgm"}}}}).Want(t, http.StatusCreated)
	poll.Until(t, "order app is up", func() bool { return r.order(t).State == "up" })
	var c credentialsAnswer
	s.Do(t, "GET", "/api/v1/catalog-item-instances/app/credentials", nil).Want(t, http.StatusOK).JSON(t, &c)
	r.appURL = c.URL
	conn, err := pgx.Connect(t.Context(), c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `CREATE TABLE items (id bigint PRIMARY KEY, body text);
		INSERT INTO items SELECT g, md5(g::text) FROM generate_series(1, 10000) g;
		CREATE INDEX items_body ON items USING gin (body gin_trgm_ops);
		COMMENT ON TABLE items IS 'the order''s items'`); err != nil {
		t.Fatal(err)
	}
	startProvider(t, s, adminRole(t, adminURL, "pw-"+unique("new")), logTo, pgprovider.DaemonConfig{
		Settings: providerhost.Settings{Name: "pg-new", Labels: map[string]string{"region": "eu"}}, ObserveInterval: -1})
	return r
}

type orderShown struct {
	State        string         `json:"state"`
	InstanceID   string         `json:"instance_id"`
	ProviderName string         `json:"provider_name"`
	Outputs      map[string]any `json:"outputs"`
	Conditions   []struct{ Type, Status, Reason, Message string }
}

func (r *rehydration) order(t testing.TB) orderShown {
	var o orderShown
	r.s.Do(t, "GET", "/api/v1/catalog-item-instances/app", nil).Want(t, http.StatusOK).JSON(t, &o)
	return o
}

// copying reports whether the order shows its data being copied.
func (o orderShown) copying() bool {
	for _, c := range o.Conditions {
		if c.Type == "Rehydrating" && c.Status == "True" && c.Reason == "CopyingData" {
			return true
		}
	}
	return false
}

type operationShown struct {
	Done  bool `json:"done"`
	Error *struct {
		Reason string `json:"reason"`
		Detail string `json:"detail"`
	} `json:"error"`
}

func (r *rehydration) rehydrate(t testing.TB) (wait func() operationShown) {
	var op struct{ ID string }
	r.s.Do(t, "POST", "/api/v1/catalog-item-instances/app:rehydrate", nil).Want(t, http.StatusAccepted).JSON(t, &op)
	return func() operationShown {
		var got operationShown
		poll.UntilWithin(t, 2*time.Minute, "the rehydration ends", func() bool {
			r.s.Do(t, "GET", "/api/v1/operations/"+op.ID, nil).Want(t, http.StatusOK).JSON(t, &got)
			return got.Done
		})
		return got
	}
}

func (r *rehydration) exists(t testing.TB, admin *pgx.Conn) bool {
	var n int
	if err := admin.QueryRow(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", r.database).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// holdTheTable locks the order's table from a superuser's session (which
// the provider's admin cannot end), so that an export waits until the
// returned release is called (or the test ends).
func (r *rehydration) holdTheTable(t *testing.T) (release func()) {
	t.Helper()
	cfg, err := pgx.ParseConfig(r.old.url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = r.database
	holder, err := pgx.ConnectConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close(context.Background()) })
	if _, err := holder.Exec(t.Context(), "BEGIN; LOCK TABLE items IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := holder.Exec(t.Context(), "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
	}
}

// waitForTheExport waits until the old database's pg_dump waits on a lock.
func (r *rehydration) waitForTheExport(t *testing.T) {
	t.Helper()
	poll.Until(t, "the export waits on the lock", func() bool {
		var n int
		_ = r.oldAdmin.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = $1 AND application_name = 'pg_dump' AND wait_event_type = 'Lock'`, r.database).Scan(&n)
		return n > 0
	})
}

func isReadOnlyRefusal(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "25006" // read_only_sql_transaction
}

// Issue 24, rehydration carries the data, through Steward's API: the order
// moves from the old server to the new one with all its rows; while the
// data is copied the order says so and the old database refuses writes,
// and every write it acknowledged is on the new one; once cleanup ran the
// old database is gone, and the outputs name the new server.
func TestSteward_RehydrateCarriesTheData(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.EnvDatabaseURL) == "" {
		t.Skipf("%s is not set", storetest.EnvDatabaseURL)
	}
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		r := setUpRehydration(t, engine)
		before := r.order(t)

		// A writer goes on writing through the rehydration, a row at a
		// time, connecting again whenever its session is ended.
		ctx, stop := context.WithCancel(t.Context())
		var (
			mu       sync.Mutex
			acked    []int64
			refusals int
			wg       sync.WaitGroup
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var conn *pgx.Conn
			defer func() {
				if conn != nil {
					conn.Close(context.Background())
				}
			}()
			for id := int64(10001); ctx.Err() == nil; id++ {
				if conn == nil {
					c, err := pgx.Connect(ctx, r.appURL)
					if err != nil {
						continue // the old server goes away at the end
					}
					conn = c
				}
				_, err := conn.Exec(ctx, "INSERT INTO items VALUES ($1, 'written during the rehydration')", id)
				mu.Lock()
				switch {
				case err == nil:
					acked = append(acked, id)
				case isReadOnlyRefusal(err):
					refusals++
				default:
					conn.Close(context.Background())
					conn = nil
				}
				mu.Unlock()
			}
		}()

		wait := r.rehydrate(t)
		poll.Until(t, "the order shows its data being copied", func() bool { return r.order(t).copying() })
		op := wait()
		stop()
		wg.Wait()
		if op.Error != nil {
			t.Fatalf("the rehydration failed: %s", op.Error.Detail)
		}
		poll.Until(t, "the order is up on the new provider", func() bool {
			o := r.order(t)
			return o.State == "up" && o.ProviderName == "pg-new" && !o.copying()
		})
		after := r.order(t)
		if after.InstanceID == before.InstanceID {
			t.Errorf("the order stayed on instance %s", before.InstanceID)
		}
		newServer, err := pgx.ParseConfig(os.Getenv(storetest.EnvDatabaseURL))
		if err != nil {
			t.Fatal(err)
		}
		if after.Outputs["host"] != newServer.Host || after.Outputs["port"] != float64(newServer.Port) ||
			after.Outputs["port"] == before.Outputs["port"] {
			t.Errorf("outputs after the rehydration %v; want the new server %s:%d (before: %v)", after.Outputs,
				newServer.Host, newServer.Port, before.Outputs)
		}

		// Every row is on the new server: the 10,000 and each write the
		// old database acknowledged; the ones it refused are not lost,
		// their writer was told.
		var c credentialsAnswer
		r.s.Do(t, "GET", "/api/v1/catalog-item-instances/app/credentials", nil).Want(t, http.StatusOK).JSON(t, &c)
		conn, err := pgx.Connect(t.Context(), c.URL)
		if err != nil {
			t.Fatalf("connect to the new database with the order's credentials: %v", err)
		}
		defer conn.Close(context.Background())
		var seeded int
		if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM items WHERE id <= 10000").Scan(&seeded); err != nil || seeded != 10000 {
			t.Errorf("rows of the 10,000 on the new database: %d, %v", seeded, err)
		}
		var missing int
		if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM unnest($1::bigint[]) a(id) WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.id = a.id)",
			acked).Scan(&missing); err != nil || missing != 0 {
			t.Errorf("%d of the %d writes acknowledged by the old database are not on the new one (%v)", missing, len(acked), err)
		}
		var comment string
		var trigram bool
		if err := conn.QueryRow(t.Context(), `SELECT obj_description('items'::regclass, 'pg_class'),
			EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = 'items_body')`).Scan(&comment, &trigram); err != nil ||
			comment != "the order's items" || !trigram {
			t.Errorf("on the new database: table comment %q, trigram index %v (%v); want both copied", comment, trigram, err)
		}
		if refusals == 0 {
			t.Error("no write was refused during the copy: the old database took writes")
		}
		if _, err := conn.Exec(t.Context(), "INSERT INTO items VALUES (0, 'on the new database')"); err != nil {
			t.Errorf("a write to the new database: %v", err)
		}
		t.Logf("%d writes acknowledged, %d refused during the rehydration", len(acked), refusals)

		poll.Until(t, "the old database is deleted by cleanup", func() bool { return !r.exists(t, r.oldAdmin) })
	})
}

// Issue 24: a copy that fails midway (the old server is killed while the
// export waits on a lock) fails the rehydration with the reason and leaves
// the order up on the old database; a write during the copy is refused,
// and once the old server is back the old database takes writes again and
// holds every row. Nothing is left on the new server.
func TestSteward_RehydrateWhoseCopyFailsKeepsTheOld(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.EnvDatabaseURL) == "" {
		t.Skipf("%s is not set", storetest.EnvDatabaseURL)
	}
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		r := setUpRehydration(t, engine)
		before := r.order(t)

		r.holdTheTable(t)
		wait := r.rehydrate(t)
		poll.Until(t, "the order shows its data being copied", func() bool { return r.order(t).copying() })
		conn, err := pgx.Connect(t.Context(), r.appURL)
		if err != nil {
			t.Fatalf("connect to the old database during the copy: %v", err)
		}
		_, err = conn.Exec(t.Context(), "CREATE TABLE during_copy (id int)")
		conn.Close(context.Background())
		if !isReadOnlyRefusal(err) {
			t.Errorf("a write to the old database during the copy: %v, want it refused as read-only", err)
		}
		r.waitForTheExport(t)

		r.old.run(t, "kill")
		op := wait()
		if op.Error == nil || op.Error.Reason != "DATA_COPY_FAILED" || !strings.Contains(op.Error.Detail, "copy") {
			t.Fatalf("rehydration after its source died: %+v, want failed with the copy's reason", op.Error)
		}
		t.Logf("the rehydration failed: %s: %s", op.Error.Reason, op.Error.Detail)
		o := r.order(t)
		if o.State != "up" || o.InstanceID != before.InstanceID || o.ProviderName != "pg-old" || o.copying() {
			t.Errorf("after the failed copy: state %s on %s (%s), copying %v; want up on the old instance %s",
				o.State, o.InstanceID, o.ProviderName, o.copying(), before.InstanceID)
		}
		poll.Until(t, "the new server holds nothing of the order", func() bool { return !r.exists(t, r.newAdmin) })

		r.old.run(t, "restart")
		var rows int
		poll.UntilWithin(t, 2*time.Minute, "the old database takes writes again", func() bool {
			conn, err := pgx.Connect(t.Context(), r.appURL)
			if err != nil {
				return false
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(t.Context(), "INSERT INTO items VALUES (10001, 'after the failed copy')"); err != nil {
				return false
			}
			return conn.QueryRow(t.Context(), "SELECT count(*) FROM items").Scan(&rows) == nil
		})
		if rows != 10001 {
			t.Errorf("rows on the old database after the failed copy: %d, want 10,001", rows)
		}
	})
}

// Issue 24: a copy that outlasts --rehydration-copy-timeout is given up:
// the operation fails naming the timeout, the order stays up on the old
// database, which takes writes again, and the new one is deleted.
func TestSteward_RehydrateWhoseCopyOutlastsItsTimeout(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.EnvDatabaseURL) == "" {
		t.Skipf("%s is not set", storetest.EnvDatabaseURL)
	}
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		r := setUpRehydration(t, engine, func(c *server.Config) { c.RehydrationCopyTimeout = 2 * time.Second })
		before := r.order(t)
		release := r.holdTheTable(t)
		wait := r.rehydrate(t)
		r.waitForTheExport(t)
		op := wait()
		if op.Error == nil || op.Error.Reason != "DATA_COPY_FAILED" || !strings.Contains(op.Error.Detail, "did not end within 2s") {
			t.Fatalf("rehydration whose copy waits: %+v, want failed naming the timeout", op.Error)
		}
		release()
		if o := r.order(t); o.State != "up" || o.InstanceID != before.InstanceID || o.copying() {
			t.Errorf("after the timeout: state %s on %s, copying %v; want up on the old instance %s", o.State, o.InstanceID,
				o.copying(), before.InstanceID)
		}
		poll.Until(t, "the old database takes writes again", func() bool {
			conn, err := pgx.Connect(t.Context(), r.appURL)
			if err != nil {
				return false
			}
			defer conn.Close(context.Background())
			_, err = conn.Exec(t.Context(), "INSERT INTO items VALUES (10001, 'after the timeout')")
			return err == nil
		})
		poll.Until(t, "the new server holds nothing of the order", func() bool { return !r.exists(t, r.newAdmin) })
	})
}
