package pgprovider_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/pgprovider"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/providerhost"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Through Steward's API: the dev catalog's postgres-small answers 503
// naming its type until a postgres provider registers; then an order
// becomes a database owned by its own role, a name that is not an
// identifier is refused by the schema before anything is placed, and a
// delete drops the database and the role.
func TestSteward_OrderPostgresSmallUntilDeleted(t *testing.T) {
	t.Parallel()
	adminURL := os.Getenv(storetest.EnvDatabaseURL)
	if adminURL == "" {
		t.Skipf("%s is not set", storetest.EnvDatabaseURL)
	}
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		// The provider's admin is what a platform team would give it: not
		// a superuser, only CREATEDB and CREATEROLE, with a password that
		// must appear in no log, answer, event or audit record.
		password := "pw-" + unique("s3cret")
		providerURL := adminRole(t, adminURL, password)
		var logs apitest.Buffer
		logTo := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		s := apitest.Start(t, engine, func(c *server.Config) { c.ProcessProvider, c.Logger = true, logTo }) // seeds the dev catalog
		orderBody := func(database string) map[string]any {
			return map[string]any{"catalog_item_id": "postgres-small", "user_values": []map[string]any{
				{"path": "database", "value": database}, {"path": "extensions", "value": []string{"pg_trgm"}}}}
		}
		name := unique("web")
		r := s.Do(t, "POST", "/api/v1/catalog-item-instances?id=web", orderBody(name))
		r.WantProblem(t, http.StatusServiceUnavailable, "NO_PROVIDER_AVAILABLE")
		if !strings.Contains(string(r.Body), "postgres-database") {
			t.Errorf("503 does not name the service type: %s", r.Body)
		}

		dumps := t.TempDir()
		startProvider(t, s, providerURL, logTo, pgprovider.DaemonConfig{Settings: providerhost.Settings{Labels: map[string]string{"region": "eu"}},
			Provider: pgprovider.Config{DumpDir: dumps}, ObserveInterval: 200 * time.Millisecond})

		admin, err := pgx.Connect(t.Context(), adminURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_, _ = admin.Exec(context.Background(), "DROP ROLE IF EXISTS "+name)
			admin.Close(context.Background())
		})
		owner := func() string {
			var o string
			if err := admin.QueryRow(t.Context(), "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", name).Scan(&o); err != nil &&
				err != pgx.ErrNoRows {
				t.Fatal(err)
			}
			return o
		}

		for _, bad := range []string{`web"; DROP DATABASE postgres; --`, "Web", "ünï", strings.Repeat("a", 64)} {
			s.Do(t, "POST", "/api/v1/catalog-item-instances", orderBody(bad)).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
		}

		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=web", orderBody(name)).Want(t, http.StatusCreated)
		state := func() string {
			var o struct{ State string }
			s.Do(t, "GET", "/api/v1/catalog-item-instances/web?show_deleted=true", nil).Want(t, http.StatusOK).JSON(t, &o)
			return o.State
		}
		poll.Until(t, "the order is up", func() bool { return state() == "up" })
		if got := owner(); got != name {
			t.Fatalf("database %s owned by %q, want its own role", name, got)
		}
		// The order shows how to reach its database (issue 24's outputs):
		// the server's host and port, the names, and what is observed.
		var shown struct {
			Outputs map[string]any `json:"outputs"`
		}
		s.Do(t, "GET", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusOK).JSON(t, &shown)
		server, err := pgx.ParseConfig(adminURL)
		if err != nil {
			t.Fatal(err)
		}
		out := shown.Outputs
		if out["host"] != server.Host || out["port"] != float64(server.Port) || out["database"] != name ||
			out["username"] != name || out["sslmode"] != "disable" {
			t.Errorf("order outputs %v; want host %s, port %d, database and username %s, sslmode disable", out,
				server.Host, server.Port, name)
		}
		if size, ok := out["size_bytes"].(float64); !ok || size < 1e6 {
			t.Errorf("order outputs size_bytes = %v, want a database's size (over 1 MB)", out["size_bytes"])
		}
		if _, ok := out["connections"].(float64); !ok {
			t.Errorf("order outputs connections = %v, want a count", out["connections"])
		}

		limit := func() int {
			var n int
			if err := admin.QueryRow(t.Context(), "SELECT datconnlimit FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		// Drift: a change by hand shows as Synced=False naming it, and its
		// report is in the order's event log.
		synced := func() (status, message string) {
			var o struct {
				Conditions []struct{ Type, Status, Message string }
			}
			s.Do(t, "GET", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusOK).JSON(t, &o)
			for _, c := range o.Conditions {
				if c.Type == "Synced" {
					return c.Status, c.Message
				}
			}
			return "", ""
		}
		poll.Until(t, "the order is Synced=True", func() bool { st, _ := synced(); return st == "True" })
		if limit() != 20 {
			t.Errorf("connection limit %d, want postgres-small's 20", limit())
		}
		if _, err := admin.Exec(t.Context(), "ALTER DATABASE "+name+" CONNECTION LIMIT 100"); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, "the order is Synced=False naming the connection limit", func() bool {
			st, msg := synced()
			return st == "False" && msg == "connection_limit: want 20, found 100"
		})
		var events struct {
			Results []struct {
				Trigger string         `json:"trigger"`
				Changes map[string]any `json:"changes"`
			} `json:"results"`
		}
		poll.Until(t, "the event log says what drifted", func() bool {
			s.Do(t, "GET", "/api/v1/catalog-item-instances/web/events", nil).Want(t, http.StatusOK).JSON(t, &events)
			return strings.Contains(fmt.Sprint(events.Results), "drifted from the spec: connection_limit: want 20, found 100")
		})

		// An update in place: the new limit reaches the server, and the
		// order is up again on the same database.
		if limit() != 100 {
			t.Errorf("connection limit %d, want the 100 set by hand: a provider in report mode changes nothing", limit())
		}
		s.Do(t, "PATCH", "/api/v1/catalog-item-instances/web", map[string]any{
			"edits": []any{map[string]any{"path": "connection_limit", "value": 50},
				map[string]any{"path": "retain_on_delete", "value": true}}}).Want(t, http.StatusOK)
		poll.Until(t, "the new connection limit is on the server and the order up", func() bool {
			return limit() == 50 && state() == "up"
		})
		poll.Until(t, "the order is in sync with its new spec", func() bool { st, _ := synced(); return st == "True" })

		// An extension off the provider's allow list is refused at once,
		// naming the list: in an update (nothing changes) and in an order
		// (none is made), not after placement.
		for _, r := range []*apitest.Response{
			s.Do(t, "PATCH", "/api/v1/catalog-item-instances/web", map[string]any{
				"edits": []any{map[string]any{"path": "extensions", "value": []string{"pg_trgm", "citext"}}}}),
			s.Do(t, "POST", "/api/v1/catalog-item-instances?id=web-ext", map[string]any{"catalog_item_id": "postgres-small",
				"user_values": []map[string]any{{"path": "database", "value": unique("ext")}, {"path": "extensions", "value": []string{"citext"}}}}),
		} {
			p := r.WantProblem(t, http.StatusBadRequest, "SPEC_REFUSED_BY_PROVIDER")
			if !strings.Contains(p.Detail, `extension "citext" is not allowed here; allowed: pg_trgm`) {
				t.Errorf("refusal detail %q does not name the allow list", p.Detail)
			}
		}
		s.Do(t, "GET", "/api/v1/catalog-item-instances/web-ext", nil).Want(t, http.StatusNotFound)
		if st := state(); st != "up" || limit() != 50 {
			t.Errorf("after a refused update: state %s, limit %d; want up and 50", st, limit())
		}

		s.Do(t, "DELETE", "/api/v1/catalog-item-instances/web", nil).Want(t, http.StatusAccepted)
		poll.Until(t, "the order is terminated", func() bool { return state() == "terminated" })
		var roles int
		if err := admin.QueryRow(t.Context(), "SELECT count(*) FROM pg_roles WHERE rolname = $1", name).Scan(&roles); err != nil {
			t.Fatal(err)
		}
		if got := owner(); got != "" || roles != 0 {
			t.Errorf("after delete: database owned by %q, %d roles named %s; want both gone", got, roles, name)
		}
		// retain_on_delete, set by the update: a final dump was kept.
		if kept, _ := filepath.Glob(filepath.Join(dumps, name+".*.dump")); len(kept) != 1 {
			t.Errorf("final dumps of %s in the dump directory: %v, want one", name, kept)
		}

		for _, path := range []string{"/api/v1/catalog-item-instances/web?show_deleted=true", "/api/v1/catalog-item-instances/web/events",
			"/api/v1/audit-events", "/api/v1/providers", "/api/v1/service-type-instances?show_deleted=true"} {
			if body := s.Do(t, "GET", path, nil).Want(t, http.StatusOK).Body; strings.Contains(string(body), password) {
				t.Errorf("GET %s shows the admin password", path)
			}
		}
		if strings.Contains(logs.String(), password) {
			t.Errorf("the logs show the admin password")
		}
	})
}

// startProvider starts a postgres provider on providerURL's server for s,
// allowing pg_trgm, with cfg's other settings, and waits until it is
// registered. It stops at cleanup.
func startProvider(t testing.TB, s *apitest.Server, providerURL string, log *slog.Logger, cfg pgprovider.DaemonConfig) *pgprovider.Daemon {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	cfg.StewardURLs, cfg.Logger = []string{s.URL()}, log
	cfg.Provider.AdminURL, cfg.Provider.SecretKey, cfg.Provider.AllowExtensions = providerURL, key, []string{"pg_trgm"}
	d := pgprovider.NewDaemon(cfg)
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	poll.Until(t, "the postgres provider registers", func() bool {
		select {
		case <-d.Registered():
			return true
		default:
			return false
		}
	})
	return d
}

// adminRole makes a role that may create databases and roles, and nothing
// more, with password, and returns the URL of adminURL's server as it.
// The test server asks every role but postgres for its password.
func adminRole(t testing.TB, adminURL, password string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), adminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	role := unique("admin")
	if _, err := conn.Exec(t.Context(), "CREATE ROLE "+role+" LOGIN CREATEDB CREATEROLE PASSWORD '"+password+"'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), adminURL)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		// What it was granted (the owners it made) goes with it.
		_, _ = c.Exec(context.Background(), "DROP OWNED BY "+role+" CASCADE")
		_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+role)
	})
	cfg, err := pgx.ParseConfig(adminURL)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", role, password, cfg.Host, cfg.Port, cfg.Database)
}

func unique(prefix string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
