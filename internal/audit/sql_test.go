package audit

import (
	"testing"

	"github.com/stewardhq/steward/internal/store/storetest"
)

func TestQueries_SameOnBothEngines(t *testing.T) { storetest.CheckQueryParity(t, sqlFS, "sql") }
