package crashtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
)

// newSchema creates a schema of the trial's own on the PostgreSQL server
// at base, and returns a URL whose connections use it (search_path), as
// storetest does for tests, so trials never see each other's tables,
// River's included. drop removes the schema; call it once no server uses it.
func newSchema(ctx context.Context, base string) (schemaURL string, drop func(), err error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("parse database URL: %w", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "crash_" + hex.EncodeToString(b[:])
	if err := execOn(ctx, base, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop = func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = execOn(ctx, base, "DROP SCHEMA "+schema+" CASCADE") // a leftover schema harms no later trial
	}
	return u.String(), drop, nil
}

// execOn runs one statement on a connection of its own.
func execOn(ctx context.Context, dbURL, stmt string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, stmt)
	return err
}
