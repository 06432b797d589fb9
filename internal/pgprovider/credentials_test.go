package pgprovider

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/pkg/provider"
)

// The credentials name the owner and its password, in a URL and a libpq
// environment that connect; a rotation makes the old password fail and the
// new one work; the same rotation asked again changes nothing, and the
// instance stays RUNNING and deletable after it.
func TestCredentials_ConnectAndRotate(t *testing.T) {
	t.Parallel()
	p := openProvider(t)
	req := order(t, p, nil)
	mustCreate(t, p, req)
	db := req.Spec["database"].(string)

	before, err := p.Credentials(t.Context(), req.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	if before.Username != db || before.Password == "" || before.Env["PGPASSWORD"] != before.Password ||
		before.Env["PGDATABASE"] != db || before.Env["DATABASE_URL"] != before.URL {
		t.Fatalf("credentials %+v: want the owner %s, a password, and the same in the environment", redactedCredentials(before), db)
	}
	mustConnectURL(t, before.URL)

	first, err := p.RotateCredentials(t.Context(), provider.RotateRequest{InstanceID: req.InstanceID, OperationID: "op-1"})
	if err != nil || first.RotateTime.IsZero() {
		t.Fatalf("rotate: %+v, %v", first, err)
	}
	after, err := p.Credentials(t.Context(), req.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Password == before.Password {
		t.Fatal("the password did not change")
	}
	if _, err := connectAs(t, p, db, before.Password, db); err == nil || !strings.Contains(err.Error(), "password authentication failed") {
		t.Errorf("the old password: %v, want refused", err)
	}
	mustConnectURL(t, after.URL)

	again, err := p.RotateCredentials(t.Context(), provider.RotateRequest{InstanceID: req.InstanceID, OperationID: "op-1"})
	if err != nil || !again.RotateTime.Equal(first.RotateTime) {
		t.Errorf("the same rotation again: %+v, %v; want the first's answer %v", again, err, first.RotateTime)
	}
	if now, _ := p.Credentials(t.Context(), req.InstanceID); now.Password != after.Password {
		t.Error("the same rotation asked again changed the password")
	}
	if got, err := p.Get(t.Context(), req.InstanceID); err != nil || got.Status != provider.StatusRunning {
		t.Errorf("after the rotation: %+v, %v; want RUNNING", got, err)
	}
	if got, err := p.Create(t.Context(), req); err != nil || got.Status != provider.StatusRunning {
		t.Errorf("a create replayed after the rotation: %+v, %v; want RUNNING", got, err)
	}
	if _, err := p.Delete(t.Context(), req.InstanceID); err != nil {
		t.Fatal(err)
	}
	if exists(t, p, "SELECT 1 FROM pg_roles WHERE rolname = $1", db) {
		t.Error("the rotated owner outlived the delete")
	}
	if _, err := p.Credentials(t.Context(), req.InstanceID); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("credentials of a deleted instance: %v, want ErrNotFound", err)
	}
	if _, err := p.RotateCredentials(t.Context(), provider.RotateRequest{InstanceID: req.InstanceID, OperationID: "op-2"}); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("rotating a deleted instance: %v, want ErrNotFound", err)
	}
}

func mustConnectURL(t *testing.T, url string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect with the credentials' URL: %v", err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	if err := conn.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func redactedCredentials(c provider.Credentials) provider.Credentials {
	c.Password, c.URL, c.Env = "…", "…", nil
	return c
}
