package pgprovider

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stewardhq/steward/pkg/provider"
)

// failureDetail is what the message of a FAILED instance says of err:
// PostgreSQL's error as it wraps it, with the server's hint when it gives
// one, on one line, bounded, and without a password (provider.Detail masks
// one in a URL or a password= setting; pgx quotes neither in the errors
// it makes).
func failureDetail(err error) string {
	s := err.Error()
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Hint != "" {
		s += " (hint: " + pgErr.Hint + ")"
	}
	return provider.Detail(s)
}
