package sprm

import (
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider"
)

// A delete reads the instance, then marks it DELETING before it calls the
// provider. When the provider reports DELETED in between (a first delete's
// end), the mark changes nothing: the instance stays DELETED with its
// version, and Delete calls no provider. It used to bring the instance back
// to DELETING for good (a second delete of an order whose create answered
// late lost the first delete's DELETED that way).
func TestMarkDeleting_LeavesAnInstanceDeletedMeanwhile(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		c := setupClocked(t, engine, nil)
		c.intent(t, "live")
		if marked, in, err := c.s.markDeleting(t.Context(), "live", nil); err != nil || !marked || in.Status != provider.StatusDeleting {
			t.Fatalf("markDeleting(live) = %v, %s, %v; want marked DELETING", marked, in.Status, err)
		}

		c.intent(t, "gone")
		at := c.s.now()
		if _, _, err := c.s.setStatus(t.Context(), InstanceStatus{InstanceID: "gone", Status: provider.StatusDeleted},
			func(tx *store.Tx) ([]string, error) {
				return c.s.q.InstanceMarkDeleted(t.Context(), tx, InstanceMarkDeletedParams{DeletedAt: at, DeleteTime: at, UpdateTime: at, ID: "gone"})
			}); err != nil {
			t.Fatal(err)
		}
		before, err := c.s.instance(t.Context(), "", "gone")
		if err != nil {
			t.Fatal(err)
		}
		marked, in, err := c.s.markDeleting(t.Context(), "gone", nil)
		if err != nil || marked {
			t.Fatalf("markDeleting(gone) = %v, %v; want not marked", marked, err)
		}
		if in.Status != provider.StatusDeleted || in.Version != before.Version {
			t.Fatalf("after markDeleting a DELETED instance is %s at version %d; want DELETED at version %d",
				in.Status, in.Version, before.Version)
		}
	})
}
