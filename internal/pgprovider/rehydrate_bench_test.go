package pgprovider_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// BenchmarkRehydrate_100MB measures a rehydration that carries a database
// of about 100 MB from one PostgreSQL server to another (the test server
// and a throwaway one), through Steward on SQLite, from the :rehydrate
// call to its operation done, against a raw `pg_dump -Fc | pg_restore` of
// the same database between the same two servers, as superuser, timed in
// the same iteration. Each iteration moves the order to the other server.
// It reports both in seconds and their ratio.
//
//	STEWARD_TEST_DATABASE_URL=… go test -run XXX -bench Rehydrate_100MB -benchtime 3x -timeout 20m ./internal/pgprovider/
func BenchmarkRehydrate_100MB(b *testing.B) {
	adminURL := os.Getenv(storetest.EnvDatabaseURL)
	if adminURL == "" {
		b.Skipf("%s is not set", storetest.EnvDatabaseURL)
	}
	r := setUpRehydration(b, store.SQLite)
	conn, err := pgx.Connect(b.Context(), r.appURL)
	if err != nil {
		b.Fatal(err)
	}
	// The data without the trigram index setUpRehydration makes: the copy
	// is measured, not an index build.
	if _, err := conn.Exec(b.Context(), `DROP INDEX items_body; INSERT INTO items
		SELECT g, repeat(md5(random()::text), 6) FROM generate_series(10001, 400000) g`); err != nil {
		b.Fatal(err)
	}
	var size int64
	if err := conn.QueryRow(b.Context(), "SELECT pg_database_size(current_database())").Scan(&size); err != nil {
		b.Fatal(err)
	}
	conn.Close(context.Background())
	b.Logf("database size %d MB", size>>20)
	superuser := map[string]string{"pg-old": r.old.url, "pg-new": adminURL}

	var raw, rehydrate time.Duration
	b.ResetTimer()
	for range b.N {
		from := r.order(b).ProviderName
		to := map[string]string{"pg-old": "pg-new", "pg-new": "pg-old"}[from]

		start := time.Now()
		rawCopy(b, superuser[from], superuser[to], r.database)
		raw += time.Since(start)

		start = time.Now()
		op := r.rehydrate(b)()
		rehydrate += time.Since(start)
		if op.Error != nil {
			b.Fatalf("rehydration %s → %s failed: %s", from, to, op.Error.Detail)
		}
		b.StopTimer()
		admin, err := pgx.Connect(b.Context(), superuser[from])
		if err != nil {
			b.Fatal(err)
		}
		poll.UntilWithin(b, time.Minute, "the old database is deleted", func() bool { return !r.exists(b, admin) })
		admin.Close(context.Background())
		b.StartTimer()
	}
	b.ReportMetric(raw.Seconds()/float64(b.N), "raw-s/op")
	b.ReportMetric(rehydrate.Seconds()/float64(b.N), "rehydrate-s/op")
	b.ReportMetric(rehydrate.Seconds()/raw.Seconds(), "x-raw")
	b.ReportMetric(float64(size>>20), "MB")
}

// rawCopy pipes pg_dump -Fc of database on fromURL's server into
// pg_restore of a new database on toURL's server, as their superusers,
// and drops that database after.
func rawCopy(b *testing.B, fromURL, toURL, database string) {
	b.Helper()
	from, err := pgx.ParseConfig(fromURL)
	if err != nil {
		b.Fatal(err)
	}
	to, err := pgx.ParseConfig(toURL)
	if err != nil {
		b.Fatal(err)
	}
	scratch := unique("raw")
	admin, err := pgx.ConnectConfig(b.Context(), to)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(b.Context(), "CREATE DATABASE "+scratch); err != nil {
		b.Fatal(err)
	}
	defer func() { _, _ = admin.Exec(context.Background(), "DROP DATABASE "+scratch+" WITH (FORCE)") }()
	bin := filepath.Dir(pgBinary(b, "pg_dump"))
	pipe := fmt.Sprintf("%s -Fc -h %s -p %d -U %s %s | %s --no-owner --no-privileges -h %s -p %d -U %s -d %s",
		filepath.Join(bin, "pg_dump"), from.Host, from.Port, from.User, database,
		filepath.Join(bin, "pg_restore"), to.Host, to.Port, to.User, scratch)
	cmd := exec.Command("bash", "-o", "pipefail", "-c", pipe)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("raw copy: %v: %s", err, stderr.String())
	}
}

// pgBinary finds a PostgreSQL client program as the provider does: the
// newest of Debian's, else on PATH.
func pgBinary(b *testing.B, name string) string {
	entries, _ := os.ReadDir("/usr/lib/postgresql")
	best := -1
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > best {
			best = n
		}
	}
	if best >= 0 {
		return filepath.Join("/usr/lib/postgresql", strconv.Itoa(best), "bin", name)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		b.Skipf("no %s", name)
	}
	return p
}
