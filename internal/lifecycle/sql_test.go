package lifecycle

import (
	"testing"

	"github.com/stewardhq/steward/internal/store/storetest"
)

func TestQueries_SameNamesOnBothEngines(t *testing.T) {
	t.Parallel()
	storetest.CheckQueryParity(t, sqlFS, "sql")
}
