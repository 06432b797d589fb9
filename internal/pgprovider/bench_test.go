package pgprovider_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/pgprovider"
	"github.com/stewardhq/steward/internal/providerhost"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// BenchmarkOrders_PostgresUp measures orders of postgres-small reaching up,
// sustained: b.N orders are created by 16 clients through Steward (on
// SQLite) as fast as they are acknowledged, each a real database and role
// on the test server (STEWARD_TEST_DATABASE_URL), and the clock stops when
// the last is up. It reports acknowledged/s and up/s.
//
//	STEWARD_TEST_DATABASE_URL=… go test -run XXX -bench PostgresUp -benchtime 200x ./internal/pgprovider/
func BenchmarkOrders_PostgresUp(b *testing.B) {
	adminURL := os.Getenv(storetest.EnvDatabaseURL)
	if adminURL == "" {
		b.Skipf("%s is not set", storetest.EnvDatabaseURL)
	}
	const clients = 16
	quiet := func(c *server.Config) {
		c.ProcessProvider, c.Logger = true, slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := apitest.Start(b, store.SQLite, quiet)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	d := pgprovider.NewDaemon(pgprovider.DaemonConfig{Settings: providerhost.Settings{StewardURLs: []string{s.URL()}},
		Provider: pgprovider.Config{AdminURL: adminURL, SecretKey: key}})
	if err := d.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Stop(context.Background()) })
	<-d.Registered()
	admin, err := pgx.Connect(b.Context(), adminURL)
	if err != nil {
		b.Fatal(err)
	}
	prefix := unique("bench")
	b.Cleanup(func() { dropAll(admin, prefix) })

	s.BenchOrdersToUp(b, clients, func(n int) any {
		return map[string]any{"catalog_item_id": "postgres-small",
			"user_values": []map[string]any{{"path": "database", "value": fmt.Sprintf("%s_%d", prefix, n)}}}
	})
}
