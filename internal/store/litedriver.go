package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"regexp"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// liteDriverName is the database/sql driver the store opens SQLite with:
// modernc's, with a statement cache per connection.
const liteDriverName = "sqlite-stmtcache"

// maxConnStatements bounds one connection's statement cache. Steward's and
// River's queries are a fixed set of texts; past the bound a query runs
// unprepared, as it would without the cache.
const maxConnStatements = 512

var registerLiteDriver = sync.OnceFunc(func() {
	db, err := sql.Open("sqlite", "")
	if err != nil {
		panic(err) // sql.Open of a registered driver does not fail
	}
	sql.Register(liteDriverName, cachingDriver{base: db.Driver()})
	_ = db.Close()
})

// cachingDriver wraps modernc's SQLite driver so that a statement run by its
// text is parsed and planned once per connection, not on every run.
// modernc prepares each statement it is given as text; River's SQLite
// driver runs all its queries that way (fetch, completion, leadership), and
// preparing them was 7% of the server's CPU under order load.
type cachingDriver struct{ base driver.Driver }

func (d cachingDriver) Open(name string) (driver.Conn, error) {
	c, err := d.base.Open(name)
	if err != nil {
		return nil, err
	}
	return &cachingConn{Conn: c, stmts: make(map[string]*connStmt)}, nil
}

// cachingConn is one SQLite connection with its prepared statements.
// database/sql never uses a connection from two goroutines at once, so the
// cache needs no lock. A statement whose rows are still open is busy; a
// second run of the same text meanwhile (a query inside a loop over another
// query's rows) runs unprepared rather than resetting the open rows.
type cachingConn struct {
	driver.Conn
	stmts map[string]*connStmt
}

type connStmt struct {
	stmt driver.Stmt
	busy bool
}

var (
	_ driver.ConnBeginTx        = (*cachingConn)(nil)
	_ driver.ConnPrepareContext = (*cachingConn)(nil)
	_ driver.ExecerContext      = (*cachingConn)(nil)
	_ driver.QueryerContext     = (*cachingConn)(nil)
	_ driver.Pinger             = (*cachingConn)(nil)
	_ driver.SessionResetter    = (*cachingConn)(nil)
	_ driver.Validator          = (*cachingConn)(nil)
)

// stmt returns the idle cached statement for query, preparing it when new;
// nil when it is busy, the cache is full or preparing failed (the caller
// then runs the query unprepared, which reports a bad query itself).
func (c *cachingConn) stmt(ctx context.Context, query string) *connStmt {
	if cs, ok := c.stmts[query]; ok {
		if cs.busy {
			return nil
		}
		return cs
	}
	if len(c.stmts) >= maxConnStatements {
		return nil
	}
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, stableLimits(query))
	if err != nil {
		return nil
	}
	cs := &connStmt{stmt: st}
	c.stmts[query] = cs
	return cs
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if cs := c.stmt(ctx, query); cs != nil {
		return cs.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	}
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, stableLimits(query), args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs := c.stmt(ctx, query)
	if cs == nil {
		return c.Conn.(driver.QueryerContext).QueryContext(ctx, stableLimits(query), args)
	}
	rows, err := cs.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &connRows{Rows: rows, stmt: cs}, nil
}

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, stableLimits(query))
}

// boundLimit is a LIMIT or OFFSET whose value is a bare parameter.
var boundLimit = regexp.MustCompile(`(?i)\b(LIMIT|OFFSET)(\s+)(\?\d*|[:@$][A-Za-z_][A-Za-z0-9_]*)`)

// stableLimits writes a LIMIT or OFFSET given as a bare parameter as
// CAST(parameter AS INTEGER), which means the same. SQLite (as modernc
// builds it) marks a statement with a bare LIMIT parameter to be prepared
// again whenever that parameter is bound, which is every run: River's job
// fetch (LIMIT ?3) was prepared 40 times a second on an idle server, 0.3 to
// 1 ms each, most of an idle replica's CPU. The cast is not re-prepared.
func stableLimits(query string) string {
	return boundLimit.ReplaceAllString(query, "$1${2}CAST($3 AS INTEGER)")
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *cachingConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *cachingConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *cachingConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

// Close finalizes the cached statements, then closes the connection.
func (c *cachingConn) Close() error {
	var errs []error
	for q, cs := range c.stmts {
		errs = append(errs, cs.stmt.Close())
		delete(c.stmts, q)
	}
	return errors.Join(append(errs, c.Conn.Close())...)
}

// connRows frees its statement for the next run when closed (modernc
// resets a reused statement on Close).
type connRows struct {
	driver.Rows
	stmt *connStmt
}

func (r *connRows) Close() error {
	err := r.Rows.Close()
	r.stmt.busy = false
	return err
}
