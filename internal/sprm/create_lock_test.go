package sprm

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
)

// A create's intent holds its provider under a key share lock until it
// commits (PostgreSQL; SQLite has one writer). Another create's lock is
// granted meanwhile: creates on one provider do not queue on each other, as
// they did under FOR UPDATE. A deregistration that starts meanwhile waits,
// then counts the new instance and refuses.
func TestCreateIntent_DeregistrationWaitsCreatesDoNot(t *testing.T) {
	t.Parallel()
	c := setupClocked(t, store.Postgres, nil)
	ctx := t.Context()
	locked, hold := make(chan struct{}), make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release) // a failed test lets the create's transaction end
	created := make(chan error, 1)
	go func() {
		created <- c.s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
			if _, err := providerFromRow(c.s.q.ProviderKeyShareByName(ctx, tx, "vm-sp")); err != nil {
				return err
			}
			close(locked)
			<-hold
			at := c.s.now()
			_, err := c.s.q.InstanceInsert(ctx, tx, InstanceInsertParams{ID: "late", Project: "default", Name: "late",
				ProviderName: "vm-sp", ServiceType: "vm", Spec: store.JSON(map[string]any{"service_type": "vm"}),
				CreateTime: at, UpdateTime: at})
			return err
		})
	}()
	<-locked

	other, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.s.cfg.DB.InTx(other, func(tx *store.Tx) error {
		_, err := providerFromRow(c.s.q.ProviderKeyShareByName(other, tx, "vm-sp"))
		return err
	}); err != nil {
		t.Fatalf("a second create's lock while the first holds its own: %v; want it granted at once", err)
	}

	deregistered := make(chan error, 1)
	go func() { deregistered <- c.s.Deregister(ctx, "vm-sp", nil) }()
	poll.Until(t, "the deregistration waits for the create's lock", func() bool {
		var waiting int
		if err := c.s.cfg.DB.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%Locks the provider row%'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-deregistered:
			t.Fatalf("the deregistration answered %v while a create held its provider", err)
		default:
		}
		return waiting >= 1 // another test's may wait too: the outcome below is ours
	})
	release()
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	if err := <-deregistered; !errors.Is(err, ErrProviderInUse) {
		t.Fatalf("deregistration after the create committed: %v; want ErrProviderInUse", err)
	}
}
