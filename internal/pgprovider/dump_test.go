package pgprovider

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stewardhq/steward/pkg/provider"
)

// An instance whose spec asks for retain_on_delete (set by an update, as
// a user would) is dumped before it is dropped: database and role are gone,
// the dump restores with pg_restore into a new database with every row.
// A provider without a dump directory refuses such a spec.
func TestDelete_RetainOnDeleteKeepsADumpThatRestores(t *testing.T) {
	t.Parallel()
	p := openProvider(t)
	none := order(t, p, map[string]any{"retain_on_delete": true})
	_, err := p.Create(t.Context(), none)
	wantRefusal(t, err, 400, "RETAIN_NOT_SUPPORTED")

	p.cfg.DumpDir = t.TempDir()
	req := order(t, p, nil)
	mustCreate(t, p, req)
	db := req.Spec["database"].(string)
	owner, err := connectAs(t, p, db, derivePassword(p.cfg.SecretKey, req.InstanceID, 0), db)
	must(t, err)
	for _, q := range []string{"CREATE TABLE items (id int PRIMARY KEY, body text)",
		"INSERT INTO items SELECT g, md5(g::text) FROM generate_series(1, 5000) g"} {
		if _, err := owner.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Update(t.Context(), provider.UpdateRequest{InstanceID: req.InstanceID, ServiceType: ServiceType,
		Spec: map[string]any{"retain_on_delete": true}}); err != nil {
		t.Fatal(err)
	}

	got, err := p.Delete(t.Context(), req.InstanceID)
	if err != nil || got.Status != provider.StatusDeleted {
		t.Fatalf("delete: %+v, %v", got, err)
	}
	path := DumpPath(p.cfg.DumpDir, db, req.InstanceID)
	if !strings.Contains(got.Message, path) {
		t.Errorf("delete answer %q does not name the dump %s", got.Message, path)
	}
	if exists(t, p, "SELECT 1 FROM pg_database WHERE datname = $1", db) || exists(t, p, "SELECT 1 FROM pg_roles WHERE rolname = $1", db) {
		t.Fatal("the database or its role outlived the delete")
	}
	if err := owner.Ping(t.Context()); err == nil {
		t.Error("the owner's session outlived the delete")
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the dump's mode: %v, %v; want 0600 (it holds the data)", info, err)
	}
	if _, err := os.Stat(path + ".partial"); !os.IsNotExist(err) {
		t.Errorf("a partial dump is left: %v", err)
	}

	restored := unique("restored")
	if _, err := p.admin.Exec(t.Context(), "CREATE DATABASE "+ident(restored)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = p.admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+ident(restored)+" WITH (FORCE)")
	})
	cmd := exec.CommandContext(t.Context(), pgTool("pg_restore"), "--no-owner", "--no-password", "--host="+p.base.Host,
		"--port="+strconv.Itoa(int(p.base.Port)), "--username="+p.base.User, "--dbname="+restored, path)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+p.base.Password)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	conn, err := connectAs(t, p, p.base.User, p.base.Password, restored)
	must(t, err)
	var rows int
	must(t, conn.QueryRow(t.Context(), "SELECT count(*) FROM items").Scan(&rows))
	if rows != 5000 {
		t.Errorf("the restored dump has %d rows, want 5000", rows)
	}
}
