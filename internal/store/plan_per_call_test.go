package store_test

import (
	"context"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A PostgreSQL query marked store.PlanPerCall runs as an unnamed statement,
// planned for its arguments each call, while any other is prepared once and
// kept, so that PostgreSQL moves it to a generic plan after five calls.
func TestPlanPerCall_IsNeverAPreparedStatement(t *testing.T) {
	t.Parallel()
	if len(storetest.Engines()) < 2 {
		t.Skip("PostgreSQL only: set " + storetest.EnvDatabaseURL)
	}
	db := storetest.Open(t, store.Postgres)
	ctx := context.Background()
	const (
		kept    = "SELECT count(*) FROM operations WHERE id > $1"
		perCall = "SELECT count(*) FROM operations\n" + store.PlanPerCall + "\nWHERE id > $1"
	)
	prepared := map[string]int{}
	err := db.InTx(ctx, func(tx *store.Tx) error { // one connection throughout
		for _, q := range []string{kept, perCall} {
			for range 6 {
				var n int
				if err := tx.QueryRow(ctx, q, "").Scan(&n); err != nil {
					return err
				}
				rows, err := tx.Query(ctx, q, "")
				if err != nil {
					return err
				}
				rows.Close()
			}
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", q).Scan(&n); err != nil {
				return err
			}
			prepared[q] = n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if prepared[kept] != 1 {
		t.Errorf("an unmarked query is prepared %d times on its connection, want once (kept)", prepared[kept])
	}
	if prepared[perCall] != 0 {
		t.Errorf("a query marked %q is a prepared statement (%d), want an unnamed one planned per call", store.PlanPerCall, prepared[perCall])
	}
}
