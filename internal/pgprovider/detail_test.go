package pgprovider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stewardhq/steward/pkg/provider"
)

func TestFailureDetail(t *testing.T) {
	t.Parallel()
	denied := &pgconn.PgError{Severity: "FATAL", Code: "28P01", Message: `password authentication failed for user "o"`,
		Hint: "check the role's password"}
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"server error with its hint": {fmt.Errorf("connect to database d as o: %w", denied),
			`connect to database d as o: FATAL: password authentication failed for user "o" (SQLSTATE 28P01) (hint: check the role's password)`},
		"passwords masked": {fmt.Errorf("read postgres://admin:hunter2@db:5432/x with password=hunter2: %w", errors.New("EOF")),
			"read postgres://admin:xxxxx@db:5432/x with password=xxxxx EOF"}, // the setting runs to a space
		"lines joined": {errors.New("pg_restore: error: could not connect\n\tconnection refused\n"),
			"pg_restore: error: could not connect | connection refused"},
	} {
		if got := failureDetail(tc.err); got != tc.want {
			t.Errorf("%s: failureDetail = %q, want %q", name, got, tc.want)
		}
	}
}

func TestFailureDetail_OfAConnectErrorHasNoPassword(t *testing.T) {
	t.Parallel()
	// Nothing listens on port 1: pgx fails to connect, with the config in
	// its error.
	cfg, err := pgx.ParseConfig("postgres://owner:hunter2@127.0.0.1:1/app?connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	_, err = pgx.ConnectConfig(context.Background(), cfg)
	if err == nil {
		t.Fatal("connected to port 1")
	}
	got := failureDetail(fmt.Errorf("connect to database app as owner: %w", err))
	if strings.Contains(got, "hunter2") || !strings.Contains(got, "connect to database app as owner: failed to connect") ||
		len(got) > provider.MaxDetailLen || strings.Contains(got, "\n") {
		t.Errorf("failureDetail = %q, want one line of at most %d bytes saying why, without the password",
			got, provider.MaxDetailLen)
	}
}
