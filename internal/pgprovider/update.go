package pgprovider

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/pkg/provider"
)

// Update changes an instance in place: its connection limit, and
// extensions added (removing one is refused: its objects would go with
// it). The names, encoding and locale are fixed at creation; a spec that
// changes them is refused.
func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) (provider.Instance, error) {
	unlock := p.locks.Lock(req.InstanceID)
	defer unlock()
	if !instanceIDPattern.MatchString(req.InstanceID) {
		return provider.Instance{}, provider.ErrNotFound
	}
	db, found, err := p.findDatabase(ctx, req.InstanceID)
	if err != nil {
		return provider.Instance{}, err
	}
	if !found {
		return provider.Instance{}, provider.ErrNotFound
	}
	s, err := p.parseSpec(provider.CreateRequest{InstanceID: req.InstanceID, Spec: req.Spec})
	if err != nil {
		return provider.Instance{}, err
	}
	// Names the spec leaves out are the ones made (their defaults came
	// from the order, which an update does not carry).
	for _, f := range []struct{ field, made, asked string }{{"database", db.name, s.Database}, {"owner", db.owner, s.Owner}} {
		if _, given := req.Spec[f.field]; given && f.asked != f.made {
			return provider.Instance{}, badSpec("FIELD_IMMUTABLE", "%s is %q and cannot change (asked: %q)", f.field, f.made, f.asked)
		}
	}
	conn, err := p.connect(ctx, p.base.User, p.base.Password, db.name)
	if err != nil {
		return provider.Instance{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, "SELECT extname FROM pg_extension WHERE extname <> 'plpgsql' ORDER BY extname")
	if err != nil {
		return provider.Instance{}, fmt.Errorf("database %s: read extensions: %w", db.name, err)
	}
	var have []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return provider.Instance{}, err
		}
		have = append(have, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return provider.Instance{}, err
	}
	for _, e := range have {
		if !slices.Contains(s.Extensions, e) {
			return provider.Instance{}, badSpec("EXTENSION_REMOVAL_REFUSED",
				"extension %q is in database %s and is not removed in place (its objects would go with it)", e, db.name)
		}
	}
	// The limit and the spec kept for drift change together: a crash
	// between them would make the update look like drift.
	err = pgx.BeginFunc(ctx, p.admin, func(tx pgx.Tx) error {
		for _, q := range []string{
			fmt.Sprintf("ALTER DATABASE %s CONNECTION LIMIT %d", ident(db.name), s.ConnectionLimit),
			"COMMENT ON DATABASE " + ident(db.name) + " IS " + literal(databaseMark(req.InstanceID, s)),
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return provider.Instance{}, fmt.Errorf("database %s: %w", db.name, err)
	}
	for _, e := range s.Extensions {
		if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+ident(e)); err != nil {
			return provider.Instance{}, fmt.Errorf("database %s: extension %s: %w", db.name, e, err)
		}
	}
	p.log.InfoContext(ctx, "database updated", "instance_id", req.InstanceID, "database", db.name,
		"connection_limit", s.ConnectionLimit, "extensions", s.Extensions, "retain_on_delete", s.RetainOnDelete)
	return provider.Instance{InstanceID: req.InstanceID, Status: provider.StatusRunning, Outputs: p.outputs(ctx, db)}, nil
}
