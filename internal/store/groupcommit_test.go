package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Many transactions at once share SQLite commits (group commit); each must
// still succeed, fail or panic on its own: a failing or panicking one
// leaves nothing behind (its AfterCommit functions never run), and the
// others' writes all commit, each one's AfterCommit run once, after its
// commit.
func TestInTx_ConcurrentTransactionsSucceedAndFailEachOnItsOwn(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine)
		now := time.Now()
		boom := errors.New("boom")
		const n = 200
		errs := make([]error, n)
		panicked := make([]bool, n)
		var afterMu sync.Mutex
		after := make([]int, n)
		visible := make([]bool, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				defer func() { panicked[i] = recover() != nil }()
				errs[i] = db.InTx(ctx, func(tx *store.Tx) error {
					if err := insertOp(ctx, tx, engine, fmt.Sprintf("op-%d", i), now, json.RawMessage(`{}`)); err != nil {
						return err
					}
					tx.AfterCommit(func() {
						afterMu.Lock()
						defer afterMu.Unlock()
						after[i]++
					})
					switch i % 10 {
					case 3:
						return boom
					case 7:
						panic("boom")
					}
					return nil
				})
			})
		}
		wg.Wait()
		for i := range n {
			_, err := readOp(ctx, db, engine, fmt.Sprintf("op-%d", i))
			visible[i] = err == nil
			if want := map[bool]int{true: 1, false: 0}[visible[i]]; after[i] != want {
				t.Errorf("tx %d (committed %v): AfterCommit ran %d times, want %d", i, visible[i], after[i], want)
			}
			switch i % 10 {
			case 3:
				if !errors.Is(errs[i], boom) || !errors.Is(err, store.ErrNotFound) {
					t.Errorf("failing tx %d: InTx = %v, row %v; want boom and no row", i, errs[i], err)
				}
			case 7:
				if !panicked[i] || !errors.Is(err, store.ErrNotFound) {
					t.Errorf("panicking tx %d: panicked %v, row %v; want the panic raised to its caller, no row",
						i, panicked[i], err)
				}
			default:
				if errs[i] != nil || panicked[i] || err != nil {
					t.Errorf("tx %d: InTx = %v (panicked %v), row %v; want committed", i, errs[i], panicked[i], err)
				}
			}
		}
	})
}

// A transaction whose caller gave up before its turn does not run.
func TestInTx_CancelledBeforeItsTurnDoesNotRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, store.SQLite)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	ran := false
	err := db.InTx(cancelled, func(tx *store.Tx) error { ran = true; return nil })
	if !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("InTx with a cancelled context = %v, ran %v; want context.Canceled, not run", err, ran)
	}
}
