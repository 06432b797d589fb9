package pgprovider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/pkg/provider"
)

// Drift modes: what an observation does with a database that differs from
// its spec.
const (
	// DriftReport reports the differences (the order shows Synced=False).
	DriftReport = "report"
	// DriftEnforce puts the database back as its spec says, and reports
	// what it fixed.
	DriftEnforce = "enforce"
)

// Observation is one instance's comparison with its spec.
type Observation struct {
	InstanceID  string
	Differences []string
	// Fixed is what enforcing put back (DriftEnforce); the database then
	// matches its spec.
	Fixed []string
}

// Report is the status report that says it: RUNNING, with the
// comparison and, for a fix, what was fixed.
func (o Observation) Report(at time.Time) provider.StatusReport {
	r := provider.StatusReport{InstanceID: o.InstanceID, Status: provider.StatusRunning, ObservedTime: at,
		Synced: &provider.Sync{InSync: len(o.Differences) == 0, Differences: o.Differences}}
	switch {
	case len(o.Fixed) > 0:
		r.Message = "drift put back: " + strings.Join(o.Fixed, "; ")
	case len(o.Differences) > 0:
		r.Message = "drifted from the spec: " + strings.Join(o.Differences, "; ")
	}
	return r
}

// key says what a report of o would say, to report only changes.
func (o Observation) key() string {
	return strings.Join(o.Differences, "\n") + "\x00" + strings.Join(o.Fixed, "\n")
}

// Observe compares every database this provider made, whose spec it
// keeps, with that spec: that it exists owned by its role, the role may
// log in, connections are allowed, the connection limit, and the
// extensions. mode DriftEnforce puts back what differs. Each instance is
// judged under its lock, so a create, update or delete under way is not
// taken for drift. An instance that cannot be judged is skipped (and
// logged); the others are returned. ids, when given, are the only
// instances judged.
func (p *Provider) Observe(ctx context.Context, mode string, ids ...string) ([]Observation, error) {
	rows, err := p.admin.Query(ctx, `SELECT c.description FROM pg_database d
		JOIN pg_shdescription c ON c.objoid = d.oid AND c.classoid = 'pg_database'::regclass
		WHERE starts_with(c.description, 'steward-instance:')`)
	if err != nil {
		return nil, fmt.Errorf("list the databases: %w", err)
	}
	comments, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list the databases: %w", err)
	}
	var out []Observation
	for _, c := range comments {
		id, _, _ := strings.Cut(strings.TrimPrefix(c, "steward-instance:"), " ")
		if !instanceIDPattern.MatchString(id) || len(ids) > 0 && !slices.Contains(ids, id) {
			continue
		}
		o, ok, err := p.observeOne(ctx, id, mode)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			p.log.WarnContext(ctx, "observe database", "instance_id", id, "error", err)
			continue
		}
		if ok {
			out = append(out, o)
		}
	}
	return out, nil
}

// observeOne judges one instance; ok is false when it has no database or
// no spec kept to judge by.
func (p *Provider) observeOne(ctx context.Context, id, mode string) (Observation, bool, error) {
	unlock := p.locks.Lock(id)
	defer unlock()
	db, found, err := p.findDatabase(ctx, id)
	if err != nil || !found || db.want == nil {
		return Observation{}, false, err
	}
	var role string
	var canLogin bool
	err = p.admin.QueryRow(ctx, `SELECT r.rolname, r.rolcanlogin FROM pg_roles r
		JOIN pg_shdescription c ON c.objoid = r.oid AND c.classoid = 'pg_authid'::regclass
		WHERE c.description = $1 OR starts_with(c.description, $1 || ' ')`, marker(id)).Scan(&role, &canLogin)
	if errors.Is(err, pgx.ErrNoRows) {
		return Observation{InstanceID: id, Differences: []string{"owner role: want one, found none"}}, true, nil
	}
	if err != nil {
		return Observation{}, false, fmt.Errorf("read the role of %s: %w", id, err)
	}
	var limit int
	var allow bool
	if err := p.admin.QueryRow(ctx, "SELECT datconnlimit, datallowconn FROM pg_database WHERE datname = $1", db.name).
		Scan(&limit, &allow); err != nil {
		return Observation{}, false, fmt.Errorf("read database %s: %w", db.name, err)
	}
	type drift struct {
		difference string
		fix        func(ctx context.Context) error
	}
	exec := func(q string) func(ctx context.Context) error {
		return func(ctx context.Context) error { _, err := p.admin.Exec(ctx, q); return err }
	}
	var drifts []drift
	if db.owner != role {
		drifts = append(drifts, drift{fmt.Sprintf("owner: want %s, found %s", role, db.owner),
			exec("ALTER DATABASE " + ident(db.name) + " OWNER TO " + ident(role))})
	}
	if !canLogin {
		drifts = append(drifts, drift{"login: want true, found false", exec("ALTER ROLE " + ident(role) + " LOGIN")})
	}
	if !allow {
		drifts = append(drifts, drift{"allow_connections: want true, found false",
			exec("ALTER DATABASE " + ident(db.name) + " ALLOW_CONNECTIONS true")})
	}
	if limit != db.want.ConnectionLimit {
		drifts = append(drifts, drift{fmt.Sprintf("connection_limit: want %d, found %d", db.want.ConnectionLimit, limit),
			exec(fmt.Sprintf("ALTER DATABASE %s CONNECTION LIMIT %d", ident(db.name), db.want.ConnectionLimit))})
	}
	if len(db.want.Extensions) > 0 && allow {
		missing, err := p.missingExtensions(ctx, db)
		if err != nil {
			return Observation{}, false, err
		}
		for _, e := range missing {
			drifts = append(drifts, drift{fmt.Sprintf("extensions: want %s, found it missing", e),
				func(ctx context.Context) error { return p.createExtension(ctx, db.name, e) }})
		}
	}
	o := Observation{InstanceID: id}
	for _, d := range drifts {
		if mode != DriftEnforce {
			o.Differences = append(o.Differences, d.difference)
			continue
		}
		if err := d.fix(ctx); err != nil {
			p.log.WarnContext(ctx, "put back drift", "instance_id", id, "database", db.name, "drift", d.difference, "error", err)
			o.Differences = append(o.Differences, d.difference)
			continue
		}
		p.log.InfoContext(ctx, "drift put back", "instance_id", id, "database", db.name, "drift", d.difference)
		o.Fixed = append(o.Fixed, d.difference)
	}
	return o, true, nil
}

// missingExtensions are the extensions of db's spec that are not in it.
func (p *Provider) missingExtensions(ctx context.Context, db database) ([]string, error) {
	conn, err := p.connect(ctx, p.base.User, p.base.Password, db.name)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, "SELECT extname FROM pg_extension")
	if err != nil {
		return nil, fmt.Errorf("database %s: read extensions: %w", db.name, err)
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("database %s: read extensions: %w", db.name, err)
	}
	var missing []string
	for _, e := range db.want.Extensions {
		if !slices.Contains(have, e) {
			missing = append(missing, e)
		}
	}
	return missing, nil
}

func (p *Provider) createExtension(ctx context.Context, database, extension string) error {
	conn, err := p.connect(ctx, p.base.User, p.base.Password, database)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+ident(extension))
	return err
}
