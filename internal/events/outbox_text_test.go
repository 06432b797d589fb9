package events

import (
	"context"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Since migration 00039 the outbox keeps an event as the text it was
// written (jsonb parsed and reformatted it), and the relay publishes it.
// A replica of the version before, still running beside a newer one,
// writes its events as jsonb (`$3::jsonb`): they land all the same and
// are relayed too.
func TestOutbox_KeepsTheEventsTextAndTakesAnOlderReplicasWrites(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		s := setupRelay(t, engine)
		c := newCollector()
		subscribe(t, s.bus, "steward.>", "text", c.handle)
		ev := newEvent(t, "dev.steward.test", map[string]any{"z": 1, "a": "b"})
		want, err := ev.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		s.publishTx(t, "steward.test.new", ev)
		var stored string
		if err := s.db.QueryRow(ctx, `SELECT event FROM event_outbox`).Scan(&stored); err != nil || stored != string(want) {
			t.Errorf("stored %q (%v), want the text written, %q", stored, err, want)
		}
		if engine == store.Postgres {
			older := newEvent(t, "dev.steward.test", map[string]any{"older": true})
			data, _ := older.MarshalJSON()
			if _, err := s.db.Exec(ctx, `INSERT INTO event_outbox (id, subject, event, created_at)
SELECT u.id, u.subject, u.event::jsonb, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, subject, event)`,
				[]string{older.ID()}, []string{"steward.test.old"}, []string{string(data)}, time.Now()); err != nil {
				t.Fatalf("an older replica's insert: %v", err)
			}
		}
		for s.outboxLen(t) > 0 {
			if _, err := s.relay.runOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
		n := 1
		if engine == store.Postgres {
			n = 2
		}
		got := c.receive(t, n)
		if got[0].ID() != ev.ID() {
			t.Errorf("relayed %s first, want %s", got[0].ID(), ev.ID())
		}
	})
}
