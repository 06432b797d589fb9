package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/store"
)

// MigratedConfig is [Config] for a database that holds every migration of
// this build (and of migrators) already. On PostgreSQL it is a new
// database cloned from a template migrated once per schema (CREATE
// DATABASE ... TEMPLATE, a fifth of migrating one: tests start hundreds
// of servers); on SQLite, where migrating an empty file takes a few
// milliseconds, an empty data dir as Config gives. Opening it migrates
// whatever the template lacks, as any start does.
func MigratedConfig(t testing.TB, engine store.Engine, migrators ...store.Migrator) store.Config {
	t.Helper()
	if engine == store.SQLite {
		return Config(t, engine)
	}
	return store.Config{DatabaseURL: ClonedURL(t, migrators...)}
}

// ClonedURL returns the URL of a new PostgreSQL database cloned from the
// template of this build's migrations and migrators', dropped at cleanup.
func ClonedURL(t testing.TB, migrators ...store.Migrator) string {
	t.Helper()
	base := os.Getenv(EnvDatabaseURL)
	if base == "" {
		t.Skipf("%s is not set", EnvDatabaseURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	template, err := migratedTemplate(ctx, base, migrators)
	if err != nil {
		t.Fatalf("template database: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	if err := adminExec(ctx, base, "CREATE DATABASE "+name+" TEMPLATE "+template); err != nil {
		t.Fatalf("clone the template database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// FORCE: a connection a test's pool left behind does not keep it.
		if err := adminExec(ctx, base, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := databaseURL(base, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// templates holds, per template name, the one build of it in this process.
var templates sync.Map // name → func() error

// migratedTemplate returns the name of the template database holding this
// build's migrations and migrators', making it when the server has none:
// under an advisory lock, so test processes that start together build it
// once, and under a temporary name renamed when done, so a process killed
// halfway leaves no template that looks whole. It stays on the server for
// later runs; another set of migrations makes another name.
func migratedTemplate(ctx context.Context, base string, migrators []store.Migrator) (string, error) {
	digest, err := store.MigrationsDigest(store.Postgres)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(digest))
	for _, m := range migrators {
		fmt.Fprintf(h, "\n%s", m.Component)
	}
	name := "steward_template_" + hex.EncodeToString(h.Sum(nil))[:16]
	build, _ := templates.LoadOrStore(name, sync.OnceValue(func() error {
		return buildTemplate(context.WithoutCancel(ctx), base, name, migrators)
	}))
	return name, build.(func() error)()
}

func buildTemplate(ctx context.Context, base, name string, migrators []store.Migrator) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	lock := "steward template " + name
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1))", lock); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext($1))", lock) //nolint:errcheck // the session's end releases it too
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	building := name + "_building"
	for _, stmt := range []string{"DROP DATABASE IF EXISTS " + building + " WITH (FORCE)", "CREATE DATABASE " + building} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	u, err := databaseURL(base, building)
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, store.Config{DatabaseURL: u, Migrators: migrators})
	if err != nil {
		return fmt.Errorf("migrate %s: %w", building, err)
	}
	db.Close() // a template may have no session while it is cloned
	_, err = conn.Exec(ctx, "ALTER DATABASE "+building+" RENAME TO "+name)
	return err
}

// adminExec runs one statement on a connection of its own to base.
func adminExec(ctx context.Context, base, stmt string) error {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, stmt)
	return err
}

// databaseURL is base with its database replaced by name.
func databaseURL(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", EnvDatabaseURL, err)
	}
	if !strings.HasPrefix(u.Scheme, "postgres") {
		return "", fmt.Errorf("%s is not a postgres:// URL", EnvDatabaseURL)
	}
	u.Path = "/" + name
	return u.String(), nil
}
