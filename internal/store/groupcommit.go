package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// maxGroup bounds how many transactions one SQLite commit carries.
const maxGroup = 64

// groupCommitter runs SQLite's write transactions on one goroutine and
// commits the ones that arrived together with one COMMIT (group commit).
// SQLite has one writer anyway; what a group saves is a BEGIN, a COMMIT and
// the WAL append of the pages the transactions share (the tail of the job
// and order tables), which were a quarter of the order flow's CPU.
//
// Each transaction runs inside a SAVEPOINT of the group's: one that fails
// (or panics) is rolled back to its savepoint and answers its own error,
// the others go on. Callers are answered only after the COMMIT, so an
// answer still means durable. A transaction runs with its context's values
// but not its cancellation: SQLite rolls back the whole transaction when a
// write statement is interrupted, which would take the group's other
// members with it.
type groupCommitter struct {
	db   *DB
	reqs chan *groupReq
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// groupReq is one caller's transaction and where its outcome goes.
type groupReq struct {
	ctx  context.Context
	fn   func(tx *Tx) error
	err  error
	pan  any
	done chan struct{}
}

func newGroupCommitter(db *DB) *groupCommitter {
	g := &groupCommitter{db: db, reqs: make(chan *groupReq), stop: make(chan struct{}), done: make(chan struct{})}
	go g.loop()
	return g
}

// errClosed answers a transaction submitted while the store closes.
var errClosed = errors.New("store: closed")

// run runs fn in the next group and returns its outcome; a panic in fn is
// raised again here, in the caller's goroutine.
func (g *groupCommitter) run(ctx context.Context, fn func(tx *Tx) error) error {
	r := &groupReq{ctx: ctx, fn: fn, done: make(chan struct{})}
	select {
	case g.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-g.stop:
		return errClosed
	}
	<-r.done // never abandoned: the outcome may be committed
	if r.pan != nil {
		panic(r.pan)
	}
	return r.err
}

func (g *groupCommitter) close() {
	g.once.Do(func() { close(g.stop) })
	<-g.done
}

func (g *groupCommitter) loop() {
	defer close(g.done)
	for {
		var first *groupReq
		select {
		case first = <-g.reqs:
		case <-g.stop:
			return
		}
		group := []*groupReq{first}
	gather:
		for len(group) < maxGroup {
			select {
			case r := <-g.reqs:
				group = append(group, r)
			default:
				break gather
			}
		}
		g.commit(group)
		for _, r := range group {
			close(r.done)
		}
	}
}

// commit runs a group in one transaction and sets each member's outcome.
func (g *groupCommitter) commit(group []*groupReq) {
	ctx := context.Background()
	fail := func(err error) {
		for _, r := range group {
			if r.err == nil && r.pan == nil {
				r.err = err
			}
		}
	}
	ltx, err := g.db.liteWrite.BeginTx(ctx, nil)
	if err != nil {
		fail(fmt.Errorf("store: begin: %w", err))
		return
	}
	tx := &Tx{db: g.db, lite: ltx, cached: &cachedTx{tx: ltx, cache: g.db.writeStmts}, grouped: true}
	defer func() {
		if len(tx.cached.missing) > 0 {
			g.db.writeStmts.prepareMissing(ctx, tx.cached.missing)
		}
	}()
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.err = err // gone before its turn: never run
			continue
		}
		if err := g.member(ctx, tx, r); err != nil {
			// The savepoint itself failed: the transaction is unusable.
			_ = ltx.Rollback()
			fail(err)
			return
		}
	}
	if err := tx.flushAppends(ctx); err != nil {
		_ = ltx.Rollback()
		fail(err)
		return
	}
	if err := ltx.Commit(); err != nil {
		fail(fmt.Errorf("store: commit: %w", classify(err)))
		return
	}
	tx.runCommitted()
}

// member runs one transaction in its savepoint. It returns an error only
// when the savepoint could not be set or undone.
func (g *groupCommitter) member(ctx context.Context, tx *Tx, r *groupReq) (err error) {
	if _, err := tx.cached.ExecContext(ctx, "SAVEPOINT steward_member"); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	appended, committed := len(tx.pending), len(tx.committed)
	func() {
		defer func() {
			if p := recover(); p != nil {
				r.pan = p
			}
		}()
		r.err = r.fn(tx)
	}()
	if r.err != nil || r.pan != nil {
		tx.pending = tx.pending[:appended] // its rows go with it
		tx.committed = tx.committed[:committed]
		if _, err := tx.cached.ExecContext(ctx, "ROLLBACK TO steward_member"); err != nil {
			return fmt.Errorf("store: rollback to savepoint: %w", err)
		}
	}
	if _, err := tx.cached.ExecContext(ctx, "RELEASE steward_member"); err != nil {
		return fmt.Errorf("store: release savepoint: %w", err)
	}
	return nil
}
