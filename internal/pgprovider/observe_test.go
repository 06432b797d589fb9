package pgprovider

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// observed returns the observation of one instance, failing when there is
// none.
func observed(t *testing.T, p *Provider, mode, id string) Observation {
	t.Helper()
	all, err := p.Observe(t.Context(), mode, id) // the test server holds other tests' databases
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(o Observation) bool { return o.InstanceID == id })
	if i < 0 {
		t.Fatalf("instance %s was not observed", id)
	}
	return all[i]
}

// Drift: changes made by hand to what the spec says (connection limit,
// connections allowed, the owner's login, an extension) are each reported,
// and in enforce mode put back, after which the database is in sync and
// its owner connects again. An update's new spec is what drift is judged
// against from then on.
func TestObserve_ReportsAndEnforcesTheSpec(t *testing.T) {
	t.Parallel()
	p := openProvider(t)
	req := order(t, p, map[string]any{"connection_limit": 20.0, "extensions": []any{"pg_trgm"}})
	mustCreate(t, p, req)
	db := req.Spec["database"].(string)
	if o := observed(t, p, DriftReport, req.InstanceID); len(o.Differences) != 0 {
		t.Fatalf("a database as made: differences %v, want none", o.Differences)
	}

	admin := func(q string) {
		t.Helper()
		if _, err := p.admin.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	admin("ALTER DATABASE " + ident(db) + " CONNECTION LIMIT 100")
	admin("ALTER ROLE " + ident(db) + " NOLOGIN")
	conn, err := connectAs(t, p, p.base.User, p.base.Password, db)
	must(t, err)
	if _, err := conn.Exec(t.Context(), "DROP EXTENSION pg_trgm"); err != nil {
		t.Fatal(err)
	}
	want := []string{"login: want true, found false", "connection_limit: want 20, found 100",
		"extensions: want pg_trgm, found it missing"}
	o := observed(t, p, DriftReport, req.InstanceID)
	if !slices.Equal(o.Differences, want) || len(o.Fixed) != 0 {
		t.Fatalf("report mode: differences %q, fixed %q; want %q", o.Differences, o.Fixed, want)
	}
	r := o.Report(time.Now())
	if r.Synced == nil || r.Synced.InSync || r.Status != provider.StatusRunning || !strings.Contains(r.Message, "connection_limit: want 20, found 100") {
		t.Errorf("its report: %+v", r)
	}
	if limit := query[int](t, p, "SELECT datconnlimit FROM pg_database WHERE datname = $1", db); limit != 100 {
		t.Errorf("report mode changed the limit to %d", limit)
	}

	o = observed(t, p, DriftEnforce, req.InstanceID)
	if len(o.Differences) != 0 || !slices.Equal(o.Fixed, want) {
		t.Fatalf("enforce mode: differences %q, fixed %q; want %q fixed", o.Differences, o.Fixed, want)
	}
	if r := o.Report(time.Now()); r.Synced == nil || !r.Synced.InSync || !strings.HasPrefix(r.Message, "drift put back: login") {
		t.Errorf("its report: %+v", r)
	}
	if got, err := p.Get(t.Context(), req.InstanceID); err != nil || got.Status != provider.StatusRunning {
		t.Errorf("after enforcing: %+v, %v; want RUNNING (the owner connects)", got, err)
	}
	if o := observed(t, p, DriftReport, req.InstanceID); len(o.Differences) != 0 || len(o.Fixed) != 0 {
		t.Errorf("after enforcing: %+v, want in sync", o)
	}

	// The spec an update sets is the one drift is judged against.
	if _, err := p.Update(t.Context(), provider.UpdateRequest{InstanceID: req.InstanceID, ServiceType: ServiceType,
		Spec: map[string]any{"connection_limit": 30.0, "extensions": []any{"pg_trgm"}}}); err != nil {
		t.Fatal(err)
	}
	if o := observed(t, p, DriftReport, req.InstanceID); len(o.Differences) != 0 {
		t.Errorf("after an update: differences %v, want none", o.Differences)
	}
}
