package placement

import (
	"testing"

	"github.com/stewardhq/steward/internal/store/storetest"
)

func TestQueries_SameOnBothEngines(t *testing.T) {
	t.Parallel()
	storetest.CheckQueryParity(t, sqlFS, "sql")
}
