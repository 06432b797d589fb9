package pgprovider

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/pkg/provider"
)

// The owner's password is never stored: it is derived from the secret key,
// the instance id and the rotation (derivePassword). The rotation lives on
// the owner role's comment, with the operation that made it and when, so a
// rotation is one transaction (the new password and its comment) and a
// repeated request of the last one is known:
//
//	steward-instance:<id>                                    never rotated
//	steward-instance:<id> rotation:<n> operation:<op> time:<rfc3339>
type rotationMark struct {
	n         int
	operation string
	time      time.Time
}

func roleMark(instanceID string, r rotationMark) string {
	if r.n == 0 {
		return marker(instanceID)
	}
	return fmt.Sprintf("%s rotation:%d operation:%s time:%s", marker(instanceID), r.n, r.operation,
		r.time.UTC().Format(time.RFC3339Nano))
}

// parseRoleMark reads a role's comment: ok is false when it is not the
// instance's.
func parseRoleMark(instanceID, comment string) (rotationMark, bool) {
	if comment == marker(instanceID) {
		return rotationMark{}, true
	}
	rest, found := strings.CutPrefix(comment, marker(instanceID)+" rotation:")
	if !found {
		return rotationMark{}, false
	}
	var r rotationMark
	fields := strings.Fields(rest)
	if len(fields) != 3 {
		return rotationMark{}, false
	}
	n, err := strconv.Atoi(fields[0])
	op, okOp := strings.CutPrefix(fields[1], "operation:")
	at, okTime := strings.CutPrefix(fields[2], "time:")
	t, terr := time.Parse(time.RFC3339Nano, at)
	if err != nil || n < 1 || !okOp || !okTime || terr != nil {
		return rotationMark{}, false
	}
	r.n, r.operation, r.time = n, op, t
	return r, true
}

// owner is an instance's database and the rotation of its owner's password.
type owner struct {
	database
	rotation rotationMark
}

// findOwner finds the instance's database and its owner's rotation;
// provider.ErrNotFound when it has none.
func (p *Provider) findOwner(ctx context.Context, instanceID string) (owner, error) {
	db, found, err := p.findDatabase(ctx, instanceID)
	if err != nil {
		return owner{}, err
	}
	if !found {
		return owner{}, provider.ErrNotFound
	}
	comment, exists, err := p.roleMarker(ctx, db.owner)
	if err != nil {
		return owner{}, err
	}
	r, ok := parseRoleMark(instanceID, comment)
	if !exists || !ok {
		return owner{}, fmt.Errorf("the owner %s of database %s is not instance %s's role", db.owner, db.name, instanceID)
	}
	return owner{database: db, rotation: r}, nil
}

func (p *Provider) password(instanceID string, r rotationMark) string {
	return derivePassword(p.cfg.SecretKey, instanceID, r.n)
}

// Credentials are the owner's: name, current password, and a URL and
// libpq environment to connect with them at the advertised address.
func (p *Provider) Credentials(ctx context.Context, instanceID string) (provider.Credentials, error) {
	if !instanceIDPattern.MatchString(instanceID) {
		return provider.Credentials{}, provider.ErrNotFound
	}
	o, err := p.findOwner(ctx, instanceID)
	if err != nil {
		return provider.Credentials{}, err
	}
	password := p.password(instanceID, o.rotation)
	mode := sslMode(p.base)
	u := url.URL{Scheme: "postgres", User: url.UserPassword(o.owner, password),
		Host: net.JoinHostPort(p.host, strconv.Itoa(p.port)), Path: "/" + o.name, RawQuery: "sslmode=" + mode}
	return provider.Credentials{InstanceID: instanceID, Username: o.owner, Password: password, URL: u.String(),
		Env: map[string]string{"PGHOST": p.host, "PGPORT": strconv.Itoa(p.port), "PGDATABASE": o.name,
			"PGUSER": o.owner, "PGPASSWORD": password, "PGSSLMODE": mode, "DATABASE_URL": u.String()}}, nil
}

// RotateCredentials gives the owner a new password; the old one is refused
// from then on (sessions open with it go on). The request of the last
// rotation again changes nothing.
func (p *Provider) RotateCredentials(ctx context.Context, req provider.RotateRequest) (provider.Rotated, error) {
	if !instanceIDPattern.MatchString(req.InstanceID) {
		return provider.Rotated{}, provider.ErrNotFound
	}
	if strings.ContainsAny(req.OperationID, " \t\n'") || len(req.OperationID) > 128 {
		return provider.Rotated{}, &provider.HTTPError{Code: 400, Reason: "INVALID_ARGUMENT",
			Message: "operation_id must be at most 128 characters without spaces or quotes"}
	}
	unlock := p.locks.Lock(req.InstanceID)
	defer unlock()
	o, err := p.findOwner(ctx, req.InstanceID)
	if err != nil {
		return provider.Rotated{}, err
	}
	if o.rotation.operation == req.OperationID {
		return provider.Rotated{InstanceID: req.InstanceID, OperationID: req.OperationID, RotateTime: o.rotation.time}, nil
	}
	next := rotationMark{n: o.rotation.n + 1, operation: req.OperationID, time: time.Now().UTC()}
	verifier, err := scramVerifier(p.password(req.InstanceID, next))
	if err != nil {
		return provider.Rotated{}, err
	}
	role := ident(o.owner)
	err = pgx.BeginFunc(ctx, p.admin, func(tx pgx.Tx) error {
		for _, q := range []string{
			"ALTER ROLE " + role + " PASSWORD " + literal(verifier),
			"COMMENT ON ROLE " + role + " IS " + literal(roleMark(req.InstanceID, next)),
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return provider.Rotated{}, fmt.Errorf("rotate the password of %s: %w", o.owner, err)
	}
	p.log.InfoContext(ctx, "credentials rotated", "instance_id", req.InstanceID, "owner", o.owner,
		"rotation", next.n, "operation_id", req.OperationID)
	return provider.Rotated{InstanceID: req.InstanceID, OperationID: req.OperationID, RotateTime: next.time}, nil
}
