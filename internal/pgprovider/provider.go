package pgprovider

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stewardhq/steward/internal/keylock"
	"github.com/stewardhq/steward/pkg/provider"
)

// Config configures a [Provider].
type Config struct {
	// AdminURL is the server and the role that creates databases and
	// roles (postgres://…). Its password appears in no log or error.
	AdminURL string
	// SecretKey derives the owners' passwords; at least 32 bytes.
	SecretKey []byte
	// AllowExtensions are the extensions an order may ask for.
	AllowExtensions []string
	// Advertise is the server's address as the databases' users reach it,
	// host[:port], shown in the outputs; empty: the admin URL's host and
	// port (the server as the provider reaches it). A port left out is the
	// admin URL's.
	Advertise string
	// DumpDir is where a database whose spec asks for retain_on_delete is
	// dumped (pg_dump -Fc) before it is dropped; empty: such a spec is
	// refused.
	DumpDir string
	// PGDump is the pg_dump to run; defaults to the newest of Debian's
	// (/usr/lib/postgresql/*/bin), else the one on PATH.
	PGDump string
	// Reporter, when set, is told when a copy of a rehydration's data ends
	// (the new instance RUNNING or FAILED).
	Reporter provider.StatusReporter
	Logger   *slog.Logger
}

// Provider realises postgres-database instances on one server. It is safe
// for concurrent use.
type Provider struct {
	cfg   Config
	admin *pgxpool.Pool
	// base is the admin URL's connection settings: owners connect with its
	// host, port and TLS, as themselves.
	base      *pgx.ConnConfig
	superuser bool
	// host and port are the server's address in the outputs (Advertise).
	host  string
	port  int
	log   *slog.Logger
	locks keylock.Locks
	// copies are the copies of rehydrations' data under way.
	copies *copies
	// exportClient reads other providers' exports.
	exportClient *http.Client
}

// Open connects to the server as the admin role.
func Open(ctx context.Context, cfg Config) (*Provider, error) { return open(ctx, cfg, nil) }

// open is Open with adjust, when not nil, applied to the connections'
// settings (a benchmark's query counter).
func open(ctx context.Context, cfg Config, adjust func(*pgx.ConnConfig)) (*Provider, error) {
	if len(cfg.SecretKey) < 32 {
		return nil, errors.New("pgprovider: the secret key must be at least 32 bytes")
	}
	poolCfg, err := pgxpool.ParseConfig(cfg.AdminURL)
	if err != nil {
		// pgx's parse errors may quote the URL, password and all.
		return nil, errors.New("pgprovider: the admin URL is not a PostgreSQL URL (postgres://user:password@host:port/database)")
	}
	poolCfg.MaxConns = 8
	if adjust != nil {
		adjust(poolCfg.ConnConfig)
	}
	admin, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return nil, fmt.Errorf("pgprovider: connect to %s: %w", redacted(poolCfg.ConnConfig), err)
	}
	p := &Provider{cfg: cfg, admin: admin, base: poolCfg.ConnConfig,
		log: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)), copies: newCopies(),
		exportClient: &http.Client{Transport: &http.Transport{Proxy: nil, ResponseHeaderTimeout: time.Minute}}}
	if p.host, p.port, err = advertised(cfg.Advertise, poolCfg.ConnConfig); err != nil {
		admin.Close()
		return nil, err
	}
	if err := admin.QueryRow(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&p.superuser); err != nil {
		admin.Close()
		return nil, fmt.Errorf("pgprovider: read the admin role on %s: %w", redacted(poolCfg.ConnConfig), err)
	}
	return p, nil
}

// Close ends the copies under way, then closes the admin connections.
func (p *Provider) Close() {
	p.copies.stop()
	p.admin.Close()
}

// Server says which server the provider serves, without the password.
func (p *Provider) Server() string { return redacted(p.base) }

func redacted(c *pgx.ConnConfig) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// marker is the comment on an instance's role and database.
func marker(instanceID string) string { return "steward-instance:" + instanceID }

// desired is what the provider keeps of an instance's spec on its
// database's comment, after the marker (steward-instance:<id> {...}):
// Delete carries only the id and needs retain_on_delete, and drift is
// judged against the rest. A database marked before it was kept has none.
type desired struct {
	ConnectionLimit int      `json:"connection_limit"`
	Extensions      []string `json:"extensions,omitempty"`
	RetainOnDelete  bool     `json:"retain_on_delete,omitempty"`
	// Copy is the state of the copy of a rehydration's data into the
	// database (copyRunning, copyFailed); empty when none is pending.
	// CopyError says why one failed.
	Copy      string `json:"copy,omitempty"`
	CopyError string `json:"copy_error,omitempty"`
}

// databaseMark is the comment on an instance's database.
func databaseMark(instanceID string, s spec) string {
	return desiredMark(instanceID, desired{ConnectionLimit: s.ConnectionLimit, Extensions: s.Extensions,
		RetainOnDelete: s.RetainOnDelete, Copy: s.copy})
}

// desiredMark is the comment on an instance's database that keeps d.
func desiredMark(instanceID string, d desired) string {
	b, _ := json.Marshal(d) // always encodes
	return marker(instanceID) + " " + string(b)
}

// parseDatabaseMark reads the desired spec off a database's comment; nil
// when the comment has none.
func parseDatabaseMark(instanceID, comment string) *desired {
	rest, ok := strings.CutPrefix(comment, marker(instanceID)+" ")
	if !ok {
		return nil
	}
	var d desired
	if json.Unmarshal([]byte(rest), &d) != nil {
		return nil
	}
	return &d
}

// Create realises the instance, or finishes what an earlier create of it
// began, and answers RUNNING once its owner can connect.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) (provider.Instance, error) {
	s, err := p.parseSpec(req)
	if err != nil {
		return provider.Instance{}, err
	}
	unlock := p.locks.Lock(req.InstanceID)
	defer unlock()
	db, found, err := p.findDatabase(ctx, req.InstanceID)
	if err != nil {
		return provider.Instance{}, err
	}
	if found {
		// Replayed: finish it as it was made.
		s.Database, s.Owner = db.name, db.owner
		if db.want != nil && db.want.Copy != "" {
			return p.copyStatus(ctx, req.InstanceID, db)
		}
	} else {
		// A database name taken is refused before the role is made, so a
		// refusal leaves nothing behind.
		if err := p.databaseFree(ctx, s); err != nil {
			return provider.Instance{}, err
		}
		if err := p.createRole(ctx, req.InstanceID, s.Owner); err != nil {
			return provider.Instance{}, err
		}
		if err := p.createDatabase(ctx, s); err != nil {
			return provider.Instance{}, err
		}
	}
	if req.Source != nil && !found {
		s.copy = copyRunning
	}
	if err := p.finish(ctx, req.InstanceID, s); err != nil {
		return provider.Instance{}, err
	}
	if s.copy == copyRunning {
		return p.startCopy(req.InstanceID, s, *req.Source), nil
	}
	o, err := p.findOwner(ctx, req.InstanceID)
	if err != nil {
		return provider.Instance{}, err
	}
	if err := p.ownerConnects(ctx, req.InstanceID, o); err != nil {
		return provider.Instance{InstanceID: req.InstanceID, Status: provider.StatusFailed, Message: failureDetail(err)}, nil
	}
	p.log.InfoContext(ctx, "database ready", "instance_id", req.InstanceID, "database", s.Database, "owner", s.Owner)
	return provider.Instance{InstanceID: req.InstanceID, Status: provider.StatusRunning,
		Outputs: p.outputs(ctx, o.database)}, nil
}

// createRole creates the owner, marked with the instance id in the same
// transaction, unless the instance's earlier create did; a role of that
// name that is not the instance's is a conflict.
func (p *Provider) createRole(ctx context.Context, instanceID, owner string) error {
	for attempt := 0; ; attempt++ {
		mark, exists, err := p.roleMarker(ctx, owner)
		if err != nil {
			return err
		}
		if _, ours := parseRoleMark(instanceID, mark); exists && ours {
			return nil
		}
		if exists {
			return &provider.HTTPError{Code: 409, Reason: "ROLE_EXISTS",
				Message: fmt.Sprintf("a role named %q already exists on this server", owner)}
		}
		verifier, err := scramVerifier(derivePassword(p.cfg.SecretKey, instanceID, 0))
		if err != nil {
			return err
		}
		role := ident(owner)
		err = pgx.BeginFunc(ctx, p.admin, func(tx pgx.Tx) error {
			stmts := []string{
				"CREATE ROLE " + role + " LOGIN PASSWORD " + literal(verifier),
				"COMMENT ON ROLE " + role + " IS " + literal(marker(instanceID)),
			}
			if !p.superuser {
				// CREATE DATABASE … OWNER needs membership of the owner.
				stmts = append(stmts, "GRANT "+role+" TO CURRENT_USER")
			}
			for _, q := range stmts {
				if _, err := tx.Exec(ctx, q); err != nil {
					return err
				}
			}
			return nil
		})
		if isCode(err, "42710") && attempt == 0 { // duplicate_object: made meanwhile
			continue
		}
		if err != nil {
			return fmt.Errorf("create role %s: %w", role, err)
		}
		return nil
	}
}

// databaseFree is nil unless a database named s.Database exists owned by
// a role other than s.Owner (409).
func (p *Provider) databaseFree(ctx context.Context, s spec) error {
	var owner string
	err := p.admin.QueryRow(ctx, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", s.Database).Scan(&owner)
	switch {
	case errors.Is(err, pgx.ErrNoRows) || err == nil && owner == s.Owner:
		return nil
	case err == nil:
		return &provider.HTTPError{Code: 409, Reason: "DATABASE_EXISTS",
			Message: fmt.Sprintf("a database named %q already exists on this server", s.Database)}
	}
	return fmt.Errorf("look up database %s: %w", s.Database, err)
}

// createDatabase creates the database owned by s.Owner unless it exists
// so owned (an earlier create died before marking it); one of that name
// owned by another role is a conflict.
func (p *Provider) createDatabase(ctx context.Context, s spec) error {
	for attempt := 0; ; attempt++ {
		var owner string
		err := p.admin.QueryRow(ctx, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", s.Database).Scan(&owner)
		if err == nil {
			return p.databaseFree(ctx, s) // ours (made by an earlier create), or a 409
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("look up database %s: %w", s.Database, err)
		}
		q := "CREATE DATABASE " + ident(s.Database) + " OWNER " + ident(s.Owner) + " TEMPLATE template0 ENCODING " +
			literal(s.Encoding) + fmt.Sprintf(" CONNECTION LIMIT %d", s.ConnectionLimit)
		if s.Locale != "" {
			q += " LOCALE " + literal(s.Locale)
		}
		_, err = p.admin.Exec(ctx, q)
		if isCode(err, "42P04") && attempt == 0 { // duplicate_database: made meanwhile
			continue
		}
		if err != nil {
			return fmt.Errorf("create database %s: %w", s.Database, err)
		}
		return nil
	}
}

// finish marks the database, closes it to PUBLIC and adds the extensions:
// each step is idempotent, so a replayed create runs them all again.
func (p *Provider) finish(ctx context.Context, instanceID string, s spec) error {
	db := ident(s.Database)
	for _, q := range []string{
		"COMMENT ON DATABASE " + db + " IS " + literal(databaseMark(instanceID, s)),
		"REVOKE ALL ON DATABASE " + db + " FROM PUBLIC",
	} {
		if _, err := p.admin.Exec(ctx, q); err != nil {
			return fmt.Errorf("database %s: %w", s.Database, err)
		}
	}
	if len(s.Extensions) == 0 {
		return nil
	}
	conn, err := p.connect(ctx, p.base.User, p.base.Password, s.Database)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, e := range s.Extensions {
		if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+ident(e)); err != nil {
			return fmt.Errorf("database %s: extension %s: %w", s.Database, e, err)
		}
	}
	return nil
}

// ownerConnects checks that the owner can connect to its database with its
// current password.
func (p *Provider) ownerConnects(ctx context.Context, instanceID string, o owner) error {
	conn, err := p.connect(ctx, o.owner, p.password(instanceID, o.rotation), o.name)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return conn.Ping(ctx)
}

// connect opens a connection to database as user, with the admin URL's
// host, port and TLS settings.
func (p *Provider) connect(ctx context.Context, user, password, database string) (*pgx.Conn, error) {
	c := p.base.Copy()
	c.User, c.Password, c.Database = user, password, database
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("connect to database %s as %s: %w", database, user, err)
	}
	return conn, nil
}

// Get answers the instance's status: RUNNING while its database is there
// and its owner can connect.
func (p *Provider) Get(ctx context.Context, instanceID string) (provider.Instance, error) {
	o, err := p.findOwner(ctx, instanceID)
	if err != nil {
		return provider.Instance{}, err
	}
	if o.want != nil && o.want.Copy != "" {
		return p.copyStatus(ctx, instanceID, o.database)
	}
	if err := p.ownerConnects(ctx, instanceID, o); err != nil {
		return provider.Instance{InstanceID: instanceID, Status: provider.StatusFailed, Message: failureDetail(err),
			Outputs: p.outputs(ctx, o.database)}, nil
	}
	return provider.Instance{InstanceID: instanceID, Status: provider.StatusRunning, Outputs: p.outputs(ctx, o.database)}, nil
}

// Delete closes the database to new connections, ends the open ones,
// drops it, then drops its owner. An instance with neither left is
// provider.ErrNotFound.
func (p *Provider) Delete(ctx context.Context, instanceID string) (provider.Instance, error) {
	if !instanceIDPattern.MatchString(instanceID) {
		return provider.Instance{}, provider.ErrNotFound
	}
	unlock := p.locks.Lock(instanceID)
	defer unlock()
	db, dbFound, err := p.findDatabase(ctx, instanceID)
	if err != nil {
		return provider.Instance{}, err
	}
	var message string
	if dbFound && db.want != nil && db.want.RetainOnDelete {
		if err := p.finalDump(ctx, instanceID, db); err != nil {
			return provider.Instance{}, err
		}
		message = "final dump kept at " + DumpPath(p.cfg.DumpDir, db.name, instanceID)
	}
	if dbFound {
		for _, q := range []string{
			"ALTER DATABASE " + ident(db.name) + " ALLOW_CONNECTIONS false",
			"DROP DATABASE IF EXISTS " + ident(db.name) + " WITH (FORCE)",
		} {
			if _, err := p.admin.Exec(ctx, q); err != nil {
				return provider.Instance{}, fmt.Errorf("drop database %s: %w", db.name, err)
			}
		}
	}
	// The role is found by its own mark: a delete that died between the
	// two drops finds only the role.
	var role string
	err = p.admin.QueryRow(ctx, `SELECT r.rolname FROM pg_roles r
		JOIN pg_shdescription c ON c.objoid = r.oid AND c.classoid = 'pg_authid'::regclass
		WHERE c.description = $1 OR starts_with(c.description, $1 || ' rotation:')`, marker(instanceID)).Scan(&role)
	roleFound := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return provider.Instance{}, fmt.Errorf("look up the role of %s: %w", instanceID, err)
	}
	if roleFound {
		if _, err := p.admin.Exec(ctx, "DROP ROLE IF EXISTS "+ident(role)); err != nil {
			return provider.Instance{}, fmt.Errorf("drop role %s: %w", role, err)
		}
	}
	if !dbFound && !roleFound {
		return provider.Instance{}, provider.ErrNotFound
	}
	p.log.InfoContext(ctx, "database dropped", "instance_id", instanceID, "database", db.name, "owner", role)
	return provider.Instance{InstanceID: instanceID, Status: provider.StatusDeleted, Message: message}, nil
}

// Health is nil while the admin role can reach the server.
func (p *Provider) Health(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := p.admin.Ping(ctx); err != nil {
		return fmt.Errorf("server %s unreachable: %w", p.Server(), err)
	}
	return nil
}

type database struct {
	name, owner string
	// want is the spec kept on its comment (nil: none kept).
	want *desired
}

// findDatabase finds the instance's database by its mark.
func (p *Provider) findDatabase(ctx context.Context, instanceID string) (database, bool, error) {
	var db database
	var comment string
	err := p.admin.QueryRow(ctx, `SELECT d.datname, pg_get_userbyid(d.datdba), c.description
		FROM pg_database d
		JOIN pg_shdescription c ON c.objoid = d.oid AND c.classoid = 'pg_database'::regclass
		WHERE c.description = $1 OR starts_with(c.description, $1 || ' ')`, marker(instanceID)).Scan(&db.name, &db.owner, &comment)
	db.want = parseDatabaseMark(instanceID, comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return database{}, false, nil
	}
	if err != nil {
		return database{}, false, fmt.Errorf("look up the database of %s: %w", instanceID, err)
	}
	return db, true, nil
}

// roleMarker returns the comment on role name, and whether it exists.
func (p *Provider) roleMarker(ctx context.Context, name string) (string, bool, error) {
	var mark string
	err := p.admin.QueryRow(ctx, "SELECT COALESCE(shobj_description(oid, 'pg_authid'), '') FROM pg_roles WHERE rolname = $1",
		name).Scan(&mark)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("look up role %s: %w", name, err)
	}
	return mark, true, nil
}

// ident quotes an identifier; every name is also checked against
// identifier before it gets here.
func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// literal quotes a string constant (standard_conforming_strings is on in
// every supported server).
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func isCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}
