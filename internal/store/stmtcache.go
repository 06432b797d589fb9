package store

import (
	"context"
	"database/sql"
	"sync"
)

// maxCachedStatements bounds a pool's statement cache: Steward's queries
// are a fixed set, so only generated SQL would go past it, and that runs
// unprepared.
const maxCachedStatements = 1024

// stmtCache keeps a prepared statement per query text for one SQLite pool.
// modernc's driver prepares (parses and plans) every statement it runs
// unless it is given a prepared one; parsing was 30% of the server's CPU in
// an order-create profile. PostgreSQL needs none of this: pgx caches
// prepared statements per connection itself.
type stmtCache struct {
	db    *sql.DB
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: make(map[string]*sql.Stmt)}
}

// lookup returns the statement prepared for query, or nil.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.stmts[query]
}

// prepared returns the statement for query, preparing it when it is new.
// It takes a connection from the pool to prepare, so it must not be called
// while holding the pool's only connection (inside a transaction: see
// [cachedTx]). It returns nil (run the query unprepared) when the cache is
// full or preparing fails; the query's own run reports a bad query.
func (c *stmtCache) prepared(ctx context.Context, query string) *sql.Stmt {
	if st := c.lookup(query); st != nil {
		return st
	}
	c.mu.RLock()
	full := len(c.stmts) >= maxCachedStatements
	c.mu.RUnlock()
	if full {
		return nil
	}
	// Not under the lock: preparing waits for a connection, and a
	// transaction holding the write connection looks statements up.
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.stmts[query]; cur != nil {
		_ = st.Close() // prepared by another caller meanwhile
		return cur
	}
	c.stmts[query] = st
	return st
}

// close closes every statement.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.stmts {
		_ = st.Close()
		delete(c.stmts, q)
	}
}

// cachedDB runs statements on a pool through its statement cache.
type cachedDB struct {
	db    *sql.DB
	cache *stmtCache
}

func (c cachedDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := c.cache.prepared(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.db.ExecContext(ctx, query, args...)
}

func (c cachedDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := c.cache.prepared(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.db.QueryContext(ctx, query, args...)
}

func (c cachedDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := c.cache.prepared(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.db.QueryRowContext(ctx, query, args...)
}

// cachedTx runs a transaction's statements through the write pool's cache.
// A statement the cache does not hold yet runs unprepared and is noted:
// preparing it needs the pool's one connection, which the transaction
// holds, so it is prepared after the transaction ends ([DB.prepareMissing]).
type cachedTx struct {
	tx      *sql.Tx
	cache   *stmtCache
	missing map[string]struct{}
}

func (c *cachedTx) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := c.cache.lookup(query); st != nil {
		// Prepared on this very connection already: reused, not parsed.
		return c.tx.StmtContext(ctx, st)
	}
	if c.missing == nil {
		c.missing = make(map[string]struct{})
	}
	c.missing[query] = struct{}{}
	return nil
}

func (c *cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := c.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.tx.ExecContext(ctx, query, args...)
}

func (c *cachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.tx.QueryContext(ctx, query, args...)
}

func (c *cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.tx.QueryRowContext(ctx, query, args...)
}

// prepareMissing prepares the statements a transaction ran unprepared,
// once it has released the write connection.
func (c *stmtCache) prepareMissing(ctx context.Context, missing map[string]struct{}) {
	for q := range missing {
		c.prepared(ctx, q)
	}
}
