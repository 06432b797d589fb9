package pgprovider

import (
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/pkg/provider"
)

// A create makes a LOGIN role and a database it owns, both marked with the
// instance id, closed to PUBLIC, with the connection limit and the
// extensions asked for; its owner can connect and another role cannot.
func TestCreate_MakesAMarkedDatabaseOwnedByItsRole(t *testing.T) {
	t.Parallel()
	p := openProvider(t)
	req := order(t, p, map[string]any{"connection_limit": 7.0, "extensions": []any{"pg_trgm"}})
	db := req.Spec["database"].(string)
	got, err := p.Create(t.Context(), req)
	if err != nil || got.Status != provider.StatusRunning {
		t.Fatalf("create: %+v, %v; want RUNNING", got, err)
	}
	if owner := query[string](t, p, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", db); owner != db {
		t.Errorf("database owned by %q, want the role %q", owner, db)
	}
	if limit := query[int](t, p, "SELECT datconnlimit FROM pg_database WHERE datname = $1", db); limit != 7 {
		t.Errorf("connection limit %d, want 7", limit)
	}
	for _, kind := range []string{"pg_database", "pg_authid"} {
		name := db
		if mark := query[string](t, p, "SELECT COALESCE(shobj_description(oid, '"+kind+"'), '') FROM "+
			map[string]string{"pg_database": "pg_database WHERE datname = $1", "pg_authid": "pg_roles WHERE rolname = $1"}[kind],
			name); mark != marker(req.InstanceID) && !strings.HasPrefix(mark, marker(req.InstanceID)+" {") {
			t.Errorf("%s comment %q, want %q (and, on the database, the spec it keeps)", kind, mark, marker(req.InstanceID))
		}
	}
	if !query[bool](t, p, "SELECT rolcanlogin FROM pg_roles WHERE rolname = $1", db) {
		t.Errorf("the owner cannot log in")
	}
	conn, err := connectAs(t, p, db, derivePassword(p.cfg.SecretKey, req.InstanceID, 0), db)
	if err != nil {
		t.Fatalf("the owner cannot connect: %v", err)
	}
	if ext := query[int](t, p, "SELECT 1"); ext != 1 {
		t.Fatal("admin query")
	}
	var trgm bool
	if err := conn.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')").Scan(&trgm); err != nil || !trgm {
		t.Errorf("pg_trgm in the database: %v, %v", trgm, err)
	}

	// PUBLIC has no CONNECT: a role of its own cannot get in.
	other := unique("other")
	if _, err := p.admin.Exec(t.Context(), "CREATE ROLE "+ident(other)+" LOGIN PASSWORD 'other-password'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = p.admin.Exec(t.Context(), "DROP ROLE IF EXISTS "+ident(other)) })
	if query[bool](t, p, "SELECT has_database_privilege($1, $2, 'CONNECT')", other, db) {
		t.Errorf("another role may connect to %s", db)
	}
	if _, err := connectAs(t, p, other, "other-password", db); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("another role connecting: %v, want permission denied", err)
	}
}

// A create replayed, or resumed after dying at any step, finishes the one
// database it began and never makes a second.
func TestCreate_ReplayedOrResumedMakesOneDatabase(t *testing.T) {
	t.Parallel()
	p := openProvider(t)
	steps := map[string]func(t *testing.T, req provider.CreateRequest, s spec){
		"done": func(t *testing.T, req provider.CreateRequest, _ spec) { mustCreate(t, p, req) },
		"after the role": func(t *testing.T, req provider.CreateRequest, s spec) {
			must(t, p.createRole(t.Context(), req.InstanceID, s.Owner))
		},
		"after CREATE DATABASE": func(t *testing.T, req provider.CreateRequest, s spec) {
			must(t, p.createRole(t.Context(), req.InstanceID, s.Owner))
			must(t, p.createDatabase(t.Context(), s))
		},
	}
	for name, died := range steps {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req := order(t, p, nil)
			s, err := parseSpec(req, nil)
			must(t, err)
			died(t, req, s)
			mustCreate(t, p, req)
			if n := query[int](t, p, `SELECT count(*) FROM pg_database d JOIN pg_shdescription c
				ON c.objoid = d.oid AND c.classoid = 'pg_database'::regclass WHERE starts_with(c.description, $1 || ' ')`,
				marker(req.InstanceID)); n != 1 {
				t.Errorf("%d databases marked with the instance, want 1", n)
			}
			got, err := p.Get(t.Context(), req.InstanceID)
			if err != nil || got.Status != provider.StatusRunning {
				t.Errorf("get: %+v, %v; want RUNNING", got, err)
			}
		})
	}
}

// A name another role or database already has is a 409, and nothing of
// the other is touched.
func TestCreate_RefusesANameTaken(t *testing.T) {
	t.Parallel()
	p := openProvider(t)
	first := order(t, p, nil)
	mustCreate(t, p, first)
	db := first.Spec["database"].(string)

	second := order(t, p, nil)
	second.Spec["owner"] = db // the first's role
	_, err := p.Create(t.Context(), second)
	wantRefusal(t, err, 409, "ROLE_EXISTS")

	third := order(t, p, nil)
	third.Spec["owner"], third.Spec["database"] = third.Spec["database"], db
	_, err = p.Create(t.Context(), third)
	wantRefusal(t, err, 409, "DATABASE_EXISTS")
	if exists(t, p, "SELECT 1 FROM pg_roles WHERE rolname = $1", third.Spec["owner"]) {
		t.Errorf("the refused create left its role")
	}
	if got, err := p.Get(t.Context(), first.InstanceID); err != nil || got.Status != provider.StatusRunning {
		t.Errorf("the first after the refusals: %+v, %v", got, err)
	}
}

// Delete drops the database and its role; a second delete, or one of an
// instance never made, is ErrNotFound; one that died between the drops
// finishes.
func TestDelete_DropsTheDatabaseThenItsRole(t *testing.T) {
	t.Parallel()
	p := openProvider(t)
	req := order(t, p, nil)
	db := req.Spec["database"].(string)
	mustCreate(t, p, req)
	conn, err := connectAs(t, p, db, derivePassword(p.cfg.SecretKey, req.InstanceID, 0), db)
	must(t, err)
	got, err := p.Delete(t.Context(), req.InstanceID)
	if err != nil || got.Status != provider.StatusDeleted {
		t.Fatalf("delete: %+v, %v; want DELETED", got, err)
	}
	if conn.Ping(t.Context()) == nil {
		t.Errorf("a session of the dropped database still answers")
	}
	if exists(t, p, "SELECT 1 FROM pg_database WHERE datname = $1", db) || exists(t, p, "SELECT 1 FROM pg_roles WHERE rolname = $1", db) {
		t.Errorf("database or role %s left after delete", db)
	}
	for _, id := range []string{req.InstanceID, unique("never"), "bad'id"} {
		if _, err := p.Delete(t.Context(), id); !errors.Is(err, provider.ErrNotFound) {
			t.Errorf("delete %q: %v, want ErrNotFound", id, err)
		}
		if _, err := p.Get(t.Context(), id); !errors.Is(err, provider.ErrNotFound) {
			t.Errorf("get %q: %v, want ErrNotFound", id, err)
		}
	}

	// Died after DROP DATABASE: only the marked role is left.
	left := order(t, p, nil)
	must(t, p.createRole(t.Context(), left.InstanceID, left.Spec["database"].(string)))
	if got, err := p.Delete(t.Context(), left.InstanceID); err != nil || got.Status != provider.StatusDeleted {
		t.Errorf("delete of a role left: %+v, %v", got, err)
	}
	if exists(t, p, "SELECT 1 FROM pg_roles WHERE rolname = $1", left.Spec["database"]) {
		t.Errorf("the role left is still there")
	}
}

func mustCreate(t *testing.T, p *Provider, req provider.CreateRequest) {
	t.Helper()
	got, err := p.Create(t.Context(), req)
	if err != nil || got.Status != provider.StatusRunning {
		t.Fatalf("create: %+v, %v; want RUNNING", got, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantRefusal(t *testing.T, err error, code int, reason string) {
	t.Helper()
	var h *provider.HTTPError
	if !errors.As(err, &h) || h.Code != code || h.Reason != reason {
		t.Fatalf("got %v, want %d %s", err, code, reason)
	}
}

// An update changes the connection limit and adds extensions in place; it
// refuses to remove an extension or to rename, and changes nothing then.
func TestUpdate_InPlace(t *testing.T) {
	t.Parallel()
	p := openProvider(t)
	req := order(t, p, map[string]any{"connection_limit": 5.0})
	db := req.Spec["database"].(string)
	mustCreate(t, p, req)
	limit := func() int {
		return query[int](t, p, "SELECT datconnlimit FROM pg_database WHERE datname = $1", db)
	}
	update := func(spec map[string]any) (provider.Instance, error) {
		return p.Update(t.Context(), provider.UpdateRequest{InstanceID: req.InstanceID, ServiceType: ServiceType, Spec: spec})
	}
	got, err := update(map[string]any{"connection_limit": 9.0, "extensions": []any{"pg_trgm"}})
	if err != nil || got.Status != provider.StatusRunning || limit() != 9 {
		t.Fatalf("update: %+v, %v, limit %d; want RUNNING and 9", got, err, limit())
	}
	conn, err := connectAs(t, p, p.base.User, p.base.Password, db)
	must(t, err)
	var n int
	must(t, conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'").Scan(&n))
	if n != 1 {
		t.Errorf("pg_trgm not added")
	}
	_, err = update(map[string]any{"connection_limit": 3.0})
	wantRefusal(t, err, 400, "EXTENSION_REMOVAL_REFUSED")
	_, err = update(map[string]any{"database": db + "x", "extensions": []any{"pg_trgm"}})
	wantRefusal(t, err, 400, "FIELD_IMMUTABLE")
	if limit() != 9 {
		t.Errorf("a refused update changed the limit to %d", limit())
	}
	if _, err := p.Update(t.Context(), provider.UpdateRequest{InstanceID: unique("never"), Spec: map[string]any{}}); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("update of an unknown instance: %v, want ErrNotFound", err)
	}
}
