package events

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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
		Event: json.RawMessage(data), CreatedAt: time.Now().UTC()})
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

// outboxChunk is the most events one insert writes. A batch is written in
// chunks of it and of its halves (256, 128, …, 1), so each engine has only
// nine such statements to prepare. Four parameters a row keep it well under
// SQLite's 32,766 and PostgreSQL's 65,535.
const outboxChunk = 256

// outboxInserts are the multi-row inserts of each engine, by chunk: the
// statement of outboxChunk>>k rows is at index k.
var outboxInserts = map[store.Engine][]string{
	store.SQLite:   outboxInsertStatements(func(int) string { return "?" }),
	store.Postgres: outboxInsertStatements(func(i int) string { return "$" + strconv.Itoa(i) }),
}

func outboxInsertStatements(param func(i int) string) []string {
	var out []string
	for n := outboxChunk; n >= 1; n /= 2 {
		var b strings.Builder
		b.WriteString("INSERT INTO event_outbox (id, subject, event, created_at) VALUES ")
		for row := range n {
			if row > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('(')
			for col := range 4 {
				if col > 0 {
					b.WriteByte(',')
				}
				b.WriteString(param(4*row + col + 1))
			}
			b.WriteByte(')')
		}
		out = append(out, b.String())
	}
	return out
}

// insertOutbox writes a batch with multi-row VALUES, in the order given
// (the rows' seq follows it). It replaced one statement that took the
// batch as JSON: SQLite's json_each parsed it back and rendered each
// event's text again, 30% of the CPU of a sentinel cycle over 100,000 due
// orders.
func insertOutbox(ctx context.Context, tx *store.Tx, rows []outboxInsert, at time.Time) error {
	statements := outboxInserts[tx.Engine()]
	for len(rows) > 0 {
		k := 0
		for outboxChunk>>k > len(rows) {
			k++
		}
		n := outboxChunk >> k
		args := make([]any, 0, 4*n)
		for _, r := range rows[:n] {
			args = append(args, r.ID, r.Subject, r.Event, at)
		}
		if _, err := tx.Exec(ctx, statements[k], args...); err != nil {
			return fmt.Errorf("write %d events to the outbox: %w", n, err)
		}
		rows = rows[n:]
	}
	return nil
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
		out[i] = outboxRow{seq: r.Seq, id: r.ID, subject: r.Subject, event: r.Event}
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
