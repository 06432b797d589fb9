package events

import (
	"context"
	"embed"
	"encoding/json"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

//go:embed sql
var sqlFS embed.FS

// outboxQueries holds the outbox statements of both engines. PublishTx gets
// only a Tx, so it picks the engine's set from it rather than from a DB.
var outboxQueries = map[store.Engine]store.Queries{
	store.SQLite:   store.MustLoadQueries(sqlFS, "sql", store.SQLite),
	store.Postgres: store.MustLoadQueries(sqlFS, "sql", store.Postgres),
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
	q := outboxQueries[tx.Engine()].Get("OutboxInsert")
	if _, err := tx.Exec(ctx, q, ev.ID(), subject, json.RawMessage(data), time.Now().UTC()); err != nil {
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
	type row struct {
		ID      string          `json:"id"`
		Subject string          `json:"subject"`
		Event   json.RawMessage `json:"event"`
	}
	rows := make([]row, len(msgs))
	for i, m := range msgs {
		if err := checkSubject(m.Subject); err != nil {
			return err
		}
		data, err := m.Event.MarshalJSON()
		if err != nil {
			return err
		}
		rows[i] = row{ID: m.Event.ID(), Subject: m.Subject, Event: data}
	}
	q := outboxQueries[tx.Engine()].Get("OutboxInsertMany")
	_, err := tx.Exec(ctx, q, store.JSON(rows), time.Now().UTC())
	return err
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
	rows, err := db.Query(ctx, outboxQueries[db.Engine()].Get("OutboxListOldest"), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		if err := rows.Scan(&r.seq, &r.id, &r.subject, &r.event); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// outboxDeleteBySeqs deletes the given rows; rows already gone (deleted by
// another relay) are no error.
func outboxDeleteBySeqs(ctx context.Context, db *store.DB, seqs []int64) error {
	list, err := json.Marshal(seqs)
	if err != nil {
		return err
	}
	_, err = db.Exec(ctx, outboxQueries[db.Engine()].Get("OutboxDeleteBySeqs"), json.RawMessage(list))
	return err
}
