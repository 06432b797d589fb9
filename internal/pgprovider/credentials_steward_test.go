package pgprovider_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/pgprovider"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

type credentialsAnswer struct {
	CatalogItemInstanceID string            `json:"catalog_item_instance_id"`
	InstanceID            string            `json:"instance_id"`
	ProviderName          string            `json:"provider_name"`
	Username              string            `json:"username"`
	Password              string            `json:"password"`
	URL                   string            `json:"url"`
	Env                   map[string]string `json:"env"`
}

// Issue 24, credentials, through Steward's API: an order's credentials
// come from its provider, connect, and write 10,000 rows; PUBLIC and
// another order's owner cannot connect to its database; a rotation makes
// the old password fail and the new one work. Every read is audited, an
// order whose provider has no credentials answers 409, and the passwords
// appear in no other answer and no log.
func TestSteward_CredentialsConnectAndRotate(t *testing.T) {
	t.Parallel()
	adminURL := os.Getenv(storetest.EnvDatabaseURL)
	if adminURL == "" {
		t.Skipf("%s is not set", storetest.EnvDatabaseURL)
	}
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		var logs apitest.Buffer
		logTo := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		s := apitest.Start(t, engine, func(c *server.Config) { c.ProcessProvider, c.Logger = true, logTo })
		startProvider(t, s, adminRole(t, adminURL, "pw-"+unique("s3cret")), logTo, pgprovider.DaemonConfig{})

		admin, err := pgx.Connect(t.Context(), adminURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { admin.Close(context.Background()) })
		order := func(id string) (database string) {
			database = unique(id)
			t.Cleanup(func() {
				_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+database+" WITH (FORCE)")
				_, _ = admin.Exec(context.Background(), "DROP ROLE IF EXISTS "+database)
			})
			s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{"catalog_item_id": "postgres-small",
				"user_values": []map[string]any{{"path": "database", "value": database}}}).Want(t, http.StatusCreated)
			poll.Until(t, "order "+id+" is up", func() bool {
				var o struct{ State string }
				s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id, nil).Want(t, http.StatusOK).JSON(t, &o)
				return o.State == "up"
			})
			return database
		}
		credentialsOf := func(id string) credentialsAnswer {
			var c credentialsAnswer
			r := s.Do(t, "GET", "/api/v1/catalog-item-instances/"+id+"/credentials", nil).Want(t, http.StatusOK)
			if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
			r.JSON(t, &c)
			return c
		}
		appDB, otherDB := order("app"), order("other")

		app := credentialsOf("app")
		if app.CatalogItemInstanceID != "app" || app.Username != appDB || app.Password == "" || app.ProviderName != pgprovider.Name ||
			app.Env["PGPASSWORD"] != app.Password || app.Env["DATABASE_URL"] != app.URL {
			t.Fatalf("credentials of app: user %q, provider %q, env %v; want the owner %s of %s", app.Username,
				app.ProviderName, keys(app.Env), appDB, pgprovider.Name)
		}
		conn, err := pgx.Connect(t.Context(), app.URL)
		if err != nil {
			t.Fatalf("connect with the credentials: %v", err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(t.Context(), `CREATE TABLE items AS SELECT g AS id, md5(g::text) AS body FROM generate_series(1, 10000) g`); err != nil {
			t.Fatal(err)
		}
		var rows int
		if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM items").Scan(&rows); err != nil || rows != 10000 {
			t.Fatalf("rows written: %d, %v; want 10000", rows, err)
		}

		// Another order's owner, and any role through PUBLIC, cannot get in.
		other := credentialsOf("other")
		intoApp := strings.Replace(other.URL, "/"+otherDB+"?", "/"+appDB+"?", 1)
		if _, err := pgx.Connect(t.Context(), intoApp); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("another order's owner connecting to app's database: %v, want permission denied", err)
		}
		var public bool
		if err := admin.QueryRow(t.Context(), "SELECT has_database_privilege('public', $1, 'CONNECT')", appDB).Scan(&public); err != nil || public {
			t.Errorf("PUBLIC may connect to app's database: %v, %v", public, err)
		}

		// Rotation: 202 and an Operation; once done, the old password is
		// refused and the new one works.
		var op struct {
			ID       string         `json:"id"`
			Done     bool           `json:"done"`
			Metadata map[string]any `json:"metadata"`
			Response map[string]any `json:"response"`
			Error    map[string]any `json:"error"`
		}
		s.Do(t, "POST", "/api/v1/catalog-item-instances/app:rotateCredentials", nil).Want(t, http.StatusAccepted).JSON(t, &op)
		if op.Metadata["kind"] != "rotate_credentials" || op.Metadata["instance_id"] != app.InstanceID {
			t.Errorf("rotation operation metadata %v", op.Metadata)
		}
		poll.Until(t, "the rotation is done", func() bool {
			s.Do(t, "GET", "/api/v1/operations/"+op.ID, nil).Want(t, http.StatusOK).JSON(t, &op)
			return op.Done
		})
		if op.Error != nil || op.Response["rotate_time"] == nil {
			t.Fatalf("rotation finished with %v, response %v", op.Error, op.Response)
		}
		rotated := credentialsOf("app")
		if rotated.Password == app.Password {
			t.Fatal("the password is the same after the rotation")
		}
		if _, err := pgx.Connect(t.Context(), app.URL); err == nil || !strings.Contains(err.Error(), "password authentication failed") {
			t.Errorf("the old password after the rotation: %v, want refused", err)
		}
		after, err := pgx.Connect(t.Context(), rotated.URL)
		if err != nil {
			t.Fatalf("the new password: %v", err)
		}
		defer after.Close(context.Background())
		if err := after.QueryRow(t.Context(), "SELECT count(*) FROM items").Scan(&rows); err != nil || rows != 10000 {
			t.Errorf("rows after the rotation: %d, %v", rows, err)
		}

		// An order of a provider without credentials.
		s.Do(t, "POST", "/api/v1/catalog-item-instances?id=box", map[string]any{"catalog_item_id": "sleeper"}).Want(t, http.StatusCreated)
		poll.Until(t, "order box is placed", func() bool {
			r := s.Do(t, "GET", "/api/v1/catalog-item-instances/box/credentials", nil)
			return r.Status == http.StatusConflict && strings.Contains(string(r.Body), "CREDENTIALS_NOT_SUPPORTED")
		})

		var audit struct {
			Results []struct {
				Action  string `json:"action"`
				Outcome string `json:"outcome"`
			} `json:"results"`
		}
		s.Do(t, "GET", "/api/v1/audit-events?max_page_size=1000&target=catalog_item_instance:app", nil).Want(t, http.StatusOK).JSON(t, &audit)
		reads := map[string]int{}
		for _, a := range audit.Results {
			if a.Action == "catalog_item_instance.credentials.read" {
				reads[a.Outcome]++
			}
		}
		if reads["success"] != 2 || len(reads) != 1 {
			t.Errorf("credentials reads of app audited %v; want its 2 successes", reads)
		}

		secrets := []string{app.Password, rotated.Password, other.Password}
		for _, path := range []string{"/api/v1/catalog-item-instances/app", "/api/v1/catalog-item-instances",
			"/api/v1/catalog-item-instances/app/events", "/api/v1/audit-events?max_page_size=1000", "/api/v1/operations/" + op.ID,
			"/api/v1/service-type-instances"} {
			body := string(s.Do(t, "GET", path, nil).Want(t, http.StatusOK).Body)
			for _, secret := range secrets {
				if strings.Contains(body, secret) {
					t.Errorf("GET %s shows a password", path)
				}
			}
		}
		for _, secret := range secrets {
			if strings.Contains(logs.String(), secret) {
				t.Error("the logs show a password")
			}
		}
	})
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
