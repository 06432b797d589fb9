package audit

import (
	"errors"
	"testing"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A request's record commits with the first transaction the request
// commits and with nothing else: a rolled-back change leaves none, a
// second transaction does not write it again, and Finish then adds none.
func TestRequestRecord_CommitsWithTheChange(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		s := New(db)
		ctx := s.Begin(t.Context(), httpapi.AuditEntry{Actor: auth.Principal{Type: "user", ID: "ann"},
			Action: "thing.create", Target: "thing:a", Project: "p", RequestID: "r1"})
		count := func() int {
			page, err := s.List(t.Context(), ListParams{Project: "p"})
			if err != nil {
				t.Fatal(err)
			}
			return len(page.Results)
		}
		failed := errors.New("the change fails")
		if err := db.InTx(ctx, func(tx *store.Tx) error { return failed }); !errors.Is(err, failed) {
			t.Fatalf("InTx = %v", err)
		}
		if n := count(); n != 0 {
			t.Fatalf("a rolled-back change left %d records", n)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		s.Finish(ctx, 200, "")
		if n := count(); n != 1 {
			t.Fatalf("%d records after two committed transactions and Finish, want 1", n)
		}
		page, _ := s.List(t.Context(), ListParams{Project: "p"})
		if r := page.Results[0]; r.Outcome != OutcomeSuccess || r.Action != "thing.create" || r.Actor.ID != "ann" ||
			r.RequestID != "r1" {
			t.Errorf("record %+v", r)
		}
		// A request that committed nothing is recorded by Finish, with the
		// outcome its status says.
		ctx2 := s.Begin(t.Context(), httpapi.AuditEntry{Action: "thing.delete", Target: "thing:b", Project: "p"})
		s.Finish(ctx2, 409, "CONFLICT")
		page, _ = s.List(t.Context(), ListParams{Project: "p", Target: "thing:b"})
		if len(page.Results) != 1 || page.Results[0].Outcome != OutcomeError || page.Results[0].Details["reason"] != "CONFLICT" {
			t.Errorf("failed request's record: %+v", page.Results)
		}
	})
}

// The record is written in the change's transaction: when it cannot be
// written, the change does not commit either.
func TestRequestRecord_ItsFailureRollsTheChangeBack(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		s := New(db)
		for _, q := range []string{"CREATE TABLE scratch (v INTEGER)", "DROP TABLE audit_events"} {
			if _, err := db.Exec(t.Context(), q); err != nil {
				t.Fatal(err)
			}
		}
		ctx := s.Begin(t.Context(), httpapi.AuditEntry{Action: "thing.create", Target: "thing:a", Project: "p"})
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO scratch (v) VALUES (1)")
			return err
		})
		if err == nil {
			t.Fatal("the change committed although its audit record could not be written")
		}
		var n int
		if err := db.QueryRow(t.Context(), "SELECT count(*) FROM scratch").Scan(&n); err != nil || n != 0 {
			t.Fatalf("scratch rows = %d, %v; want the change rolled back", n, err)
		}
	})
}
