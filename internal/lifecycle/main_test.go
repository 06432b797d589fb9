package lifecycle

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain serves both this package's tests and the HTTP-level ones in
// lifecycle_test: a test binary has one TestMain.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"))
}
