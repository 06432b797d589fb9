package pgprovider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// testServer is the test PostgreSQL server's admin URL; the tests skip
// without one.
func testServer(t *testing.T) string {
	t.Helper()
	url := os.Getenv(storetest.EnvDatabaseURL)
	if url == "" {
		t.Skipf("%s is not set", storetest.EnvDatabaseURL)
	}
	return url
}

// openProvider opens a Provider on the test server, allowing pg_trgm.
func openProvider(t *testing.T) *Provider {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	p, err := Open(t.Context(), Config{AdminURL: testServer(t), SecretKey: key, AllowExtensions: []string{"pg_trgm"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// unique returns a name no other test uses: prefix and random hex.
func unique(prefix string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

// order is a create request for a fresh instance with a database of its
// own name; extra fields are added to the spec. The database and role are
// dropped at cleanup whatever the test did.
func order(t *testing.T, p *Provider, extra map[string]any) provider.CreateRequest {
	t.Helper()
	name := unique("db")
	spec := map[string]any{"service_type": ServiceType, "database": name}
	for k, v := range extra {
		spec[k] = v
	}
	req := provider.CreateRequest{InstanceID: unique("inst"), ServiceType: ServiceType, Spec: spec}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = p.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)")
		_, _ = p.admin.Exec(ctx, "DROP ROLE IF EXISTS "+ident(name))
	})
	return req
}

// query reads one value as the admin role.
func query[T any](t *testing.T, p *Provider, sql string, args ...any) T {
	t.Helper()
	var v T
	if err := p.admin.QueryRow(t.Context(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// exists says whether a row matches.
func exists(t *testing.T, p *Provider, sql string, args ...any) bool {
	t.Helper()
	return query[bool](t, p, "SELECT EXISTS ("+sql+")", args...)
}

// connectAs connects to database as user with password.
func connectAs(t *testing.T, p *Provider, user, password, database string) (*pgx.Conn, error) {
	t.Helper()
	conn, err := p.connect(t.Context(), user, password, database)
	if err == nil {
		t.Cleanup(func() { conn.Close(context.Background()) })
	}
	return conn, err
}
