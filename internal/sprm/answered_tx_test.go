package sprm_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// A create's AnsweredTx runs in the transaction that records the
// provider's answer (placement records it on the resource there, in no
// transaction of its own): it sees the instance answered, and when it
// fails the answer is not recorded either.
func TestCreate_AnsweredTxCommitsWithTheAnswer(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setup(t, engine)
		ctx := t.Context()
		create := func(id string, answered func(ctx context.Context, tx *store.Tx, status provider.Status) error) (sprm.Instance, error) {
			return e.s.SPRM().Create(ctx, sprm.CreateParams{ID: id, Project: "default", ProviderName: "vm-sp",
				Spec: vmSpec(id), AnsweredTx: answered})
		}
		var seen string
		var told provider.Status
		in, err := create("vm-1", func(ctx context.Context, tx *store.Tx, status provider.Status) error {
			told = status
			return tx.QueryRow(ctx, "SELECT status FROM service_type_instances WHERE id = 'vm-1'").Scan(&seen)
		})
		if err != nil || in.Status == provider.StatusPending || told != in.Status || seen != string(in.Status) {
			t.Fatalf("create = %s, %v; AnsweredTx told %s and read %q; want the answer recorded, told and read in its transaction",
				in.Status, err, told, seen)
		}

		boom := errors.New("boom")
		if _, err := create("vm-2", func(context.Context, *store.Tx, provider.Status) error { return boom }); err == nil {
			t.Fatal("a create whose AnsweredTx failed succeeded")
		}
		got, err := e.s.SPRM().Instance(ctx, "", "vm-2", true)
		if err != nil || (got.Status != provider.StatusPending && got.Status != provider.StatusUnknown) {
			t.Fatalf("instance after AnsweredTx failed = %s, %v; want its answer not recorded (PENDING or UNKNOWN)", got.Status, err)
		}
	})
}
