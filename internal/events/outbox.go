package events

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// outboxQueries holds the outbox statements of both engines. PublishTx gets
// only a Tx, so it picks the engine's set from it rather than from a DB.
var outboxQueries = map[store.Engine]*queries{
	store.SQLite:   newQueries(store.SQLite),
	store.Postgres: newQueries(store.Postgres),
}

// PublishTx writes ev to the outbox in tx, to be published on subject by the
// [Relay] once tx commits. A rolled-back tx publishes nothing, and a
// committed one publishes at least once: this is how a state change and its
// event commit together (DESIGN §5).
//
// It returns errors wrapping [ErrInvalidSubject] or [ErrInvalidEvent], or
// the store's error. It does not wake the relay; see [Relay.Notify].
func PublishTx(ctx context.Context, tx *store.Tx, subject string, ev Event) error {
	if err := checkSubject(subject); err != nil {
		return err
	}
	data, err := ev.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = outboxQueries[tx.Engine()].OutboxInsert(ctx, tx, OutboxInsertParams{ID: ev.ID(), Subject: subject,
		Event: string(data), CreatedAt: time.Now().UTC()})
	if err != nil {
		return err
	}
	return nil
}

// Message is an event and the subject to publish it on, for [PublishManyTx].
type Message struct {
	Subject string
	Event   Event
}

// PublishManyTx is [PublishTx] for a batch, in one statement: the relay
// publishes the events in the order given. It checks every message before
// writing any.
func PublishManyTx(ctx context.Context, tx *store.Tx, msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	rows := make([]outboxInsert, len(msgs))
	for i, m := range msgs {
		if err := checkSubject(m.Subject); err != nil {
			return err
		}
		data, err := m.Event.MarshalJSON()
		if err != nil {
			return err
		}
		rows[i] = outboxInsert{ID: m.Event.ID(), Subject: m.Subject, Event: data}
	}
	return insertOutbox(ctx, tx, rows, time.Now().UTC())
}

// outboxInsert is an event of a batch to write.
type outboxInsert struct {
	ID      string
	Subject string
	Event   json.RawMessage
}

// outboxInsertLite writes a batch on SQLite, in chunks.
var outboxInsertLite = store.NewChunked(0, 4, func(values string) string {
	return "INSERT INTO event_outbox (id, subject, event, created_at) " + values
})

// outboxInsertPG writes a batch on PostgreSQL, an array a column.
const outboxInsertPG = `INSERT INTO event_outbox (id, subject, event, created_at)
SELECT u.id, u.subject, u.event, $4
FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS u(id, subject, event, n)
ORDER BY u.n`

// insertOutbox writes a batch in the order given (the rows' seq follows
// it): on SQLite as multi-row VALUES, on PostgreSQL as arrays. It replaced
// one statement that took the batch as JSON: SQLite's json_each parsed it
// back and rendered each event's text again, 30% of the CPU of a sentinel
// cycle over 100,000 due orders.
func insertOutbox(ctx context.Context, tx *store.Tx, rows []outboxInsert, at time.Time) error {
	if tx.Engine() == store.Postgres {
		ids, subjects, evs := make([]string, len(rows)), make([]string, len(rows)), make([]string, len(rows))
		for i, r := range rows {
			ids[i], subjects[i], evs[i] = r.ID, r.Subject, string(r.Event)
		}
		if _, err := tx.Exec(ctx, outboxInsertPG, ids, subjects, evs, at); err != nil {
			return fmt.Errorf("write %d events to the outbox: %w", len(rows), err)
		}
		return nil
	}
	return outboxInsertLite.Each(len(rows), nil, func(i int, args []any) []any {
		return append(args, rows[i].ID, rows[i].Subject, rows[i].Event, at)
	}, func(query string, args []any) error {
		if _, err := tx.Exec(ctx, query, args...); err != nil {
			return fmt.Errorf("write %d events to the outbox: %w", len(args)/4, err)
		}
		return nil
	})
}

// outboxRow is one event waiting for the relay.
type outboxRow struct {
	seq     int64
	id      string
	subject string
	event   json.RawMessage
}

// outboxListOldest returns up to limit rows, oldest first.
func outboxListOldest(ctx context.Context, db *store.DB, limit int) ([]outboxRow, error) {
	rows, err := outboxQueries[db.Engine()].OutboxListOldest(ctx, db, int64(limit))
	if err != nil {
		return nil, err
	}
	out := make([]outboxRow, len(rows))
	for i, r := range rows {
		out[i] = outboxRow{seq: r.Seq, id: r.ID, subject: r.Subject, event: json.RawMessage(r.Event)}
	}
	return out, nil
}

// outboxDeleteBySeqs deletes the given rows; rows already gone (deleted by
// another relay) are no error.
func outboxDeleteBySeqs(ctx context.Context, db *store.DB, seqs []int64) error {
	list, err := json.Marshal(seqs)
	if err != nil {
		return err
	}
	_, err = outboxQueries[db.Engine()].OutboxDeleteBySeqs(ctx, db, json.RawMessage(list))
	return err
}
