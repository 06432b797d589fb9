package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

var testAppender = store.NewAppender("audit_events",
	"id", "time", "actor_type", "actor_id", "action", "target", "project", "outcome", "request_id", "details")

func appendRow(ctx context.Context, tx *store.Tx, id string) error {
	return tx.Append(ctx, testAppender, id, time.Now().UTC(), "user", "t", "test.append", "target:"+id, "p", "success",
		"", store.JSON(map[string]any{}))
}

// Rows appended by transactions that share a group commit are written with
// the ones that commit and dropped with the ones that fail; an append that
// cannot be written is refused in its own transaction, not the group's.
func TestAppend_RowsFollowTheirTransaction(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine)
		boom := errors.New("boom")
		const n = 300
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				errs[i] = db.InTx(ctx, func(tx *store.Tx) error {
					id := fmt.Sprintf("row-%d", i)
					if i%10 == 7 {
						return tx.Append(ctx, testAppender, id, nil, "", "", "", "", "", "", "", "")
					}
					if err := appendRow(ctx, tx, id); err != nil {
						return err
					}
					// Two rows in one transaction, apart from each other.
					if err := appendRow(ctx, tx, id+"-b"); err != nil {
						return err
					}
					if i%10 == 3 {
						return boom
					}
					return nil
				})
			})
		}
		wg.Wait()
		for i := range n {
			var count int
			id := fmt.Sprintf("row-%d", i)
			if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM audit_events WHERE id IN ("+placeholders(engine)+")",
				id, id+"-b").Scan(&count); err != nil {
				t.Fatal(err)
			}
			switch i % 10 {
			case 3:
				if !errors.Is(errs[i], boom) || count != 0 {
					t.Errorf("failing tx %d: InTx = %v, %d rows; want boom and none", i, errs[i], count)
				}
			case 7:
				if errs[i] == nil || count != 0 {
					t.Errorf("tx %d appending a nil: InTx = %v, %d rows; want an error and none", i, errs[i], count)
				}
			default:
				if errs[i] != nil || count != 2 {
					t.Errorf("tx %d: InTx = %v, %d rows; want both committed", i, errs[i], count)
				}
			}
		}
	})
}

func placeholders(engine store.Engine) string {
	if engine == store.Postgres {
		return "$1, $2"
	}
	return "?, ?"
}
