package store

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

var (
	// ErrNotFound is returned by Row.Scan when the query matched no row.
	ErrNotFound = errors.New("store: not found")
	// ErrAlreadyExists is returned when a write breaks a unique constraint.
	ErrAlreadyExists = errors.New("store: already exists")
	// ErrNoReferent is returned when a write breaks a foreign key: the row
	// it refers to is not there.
	ErrNoReferent = errors.New("store: the row referred to is not there")
	// ErrStale is returned by domains when a versioned write matched no row
	// because another writer changed it first (If-Match / optimistic locking).
	// Its text is the detail of the 412 a client reads, so it speaks to them.
	ErrStale = errors.New("the resource was changed by another request since the version this one names (If-Match) was read; read it again")
	// ErrInvalidPageToken is returned by DecodeCursor for a token it did not issue.
	ErrInvalidPageToken = errors.New("store: invalid page token")
)

// SQLite extended result codes (sqlite3.h) that mean a unique key, or a
// foreign key, was violated.
const (
	sqliteConstraintPrimaryKey = 1555
	sqliteConstraintUnique     = 2067
	sqliteConstraintForeignKey = 787
)

// classify translates a driver error into the store's sentinels, keeping the
// driver error in the chain for logs. Domains never see driver error types.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return fmt.Errorf("%w: %s", ErrAlreadyExists, pgErr.ConstraintName)
		case "23503":
			return fmt.Errorf("%w: %s", ErrNoReferent, pgErr.ConstraintName)
		}
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() {
		case sqliteConstraintPrimaryKey, sqliteConstraintUnique:
			return fmt.Errorf("%w: %s", ErrAlreadyExists, liteErr.Error())
		case sqliteConstraintForeignKey:
			return fmt.Errorf("%w: %s", ErrNoReferent, liteErr.Error())
		}
	}
	return err
}
