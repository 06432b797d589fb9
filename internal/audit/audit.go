package audit

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// Outcomes of a record.
const (
	OutcomeSuccess = "success"
	OutcomeDenied  = "denied"
	OutcomeError   = "error"
)

// Actor is who acted (API.md: {"type": "user|service_account", "id"}).
type Actor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	// Token is the id of the token the actor was authenticated by: two
	// actors may share a type and id (token names are not unique), never a
	// token.
	Token string `json:"token,omitempty"`
}

// Record is one line of the audit log.
type Record struct {
	ID        string         `json:"id"`
	Time      time.Time      `json:"time"`
	Actor     Actor          `json:"actor"`
	Action    string         `json:"action"`
	Target    string         `json:"target"`
	Project   string         `json:"project"`
	Outcome   string         `json:"outcome"`
	RequestID string         `json:"request_id"`
	Details   map[string]any `json:"details"`

	seq int64 // the insertion order, the list's key
}

// Service writes and lists audit records. It is safe for concurrent use.
type Service struct {
	db  *store.DB
	q   *queries
	now func() time.Time
}

// New returns a Service over db.
func New(db *store.DB) *Service {
	return &Service{db: db, q: newQueries(db.Engine()), now: time.Now}
}

// appender writes records; in a SQLite group commit a group's records go in
// one statement (store.Appender).
var appender = store.NewAppender("audit_events",
	"id", "time", "actor_type", "actor_id", "actor_token", "action", "target", "project", "outcome", "request_id", "details")

// System is the actor of what Steward does on its own: provider health
// checks, the cleanup queue.
var System = Actor{Type: "service_account", ID: "steward"}

// WriteTx writes r in tx, the transaction of the change it records,
// filling its id and time when unset.
func WriteTx(ctx context.Context, tx *store.Tx, r Record) error {
	p := insertParams(&r, time.Now)
	if err := tx.Append(ctx, appender, p.ID, p.Time, p.ActorType, p.ActorID, p.ActorToken, p.Action, p.Target, p.Project, p.Outcome,
		p.RequestID, p.Details); err != nil {
		return fmt.Errorf("write audit record %s: %w", r.Action, err)
	}
	return nil
}

// Write writes r on its own.
func (s *Service) Write(ctx context.Context, r Record) error {
	_, err := s.q.AuditInsert(ctx, s.db, insertParams(&r, s.now))
	if err != nil {
		return fmt.Errorf("write audit record %s: %w", r.Action, err)
	}
	return nil
}

// insertParams fills r's id and time when unset and returns its row.
func insertParams(r *Record, now func() time.Time) AuditInsertParams {
	if r.ID == "" {
		r.ID = store.NewID()
	}
	if r.Time.IsZero() {
		r.Time = now()
	}
	r.Time = r.Time.UTC().Truncate(time.Microsecond)
	details := r.Details
	if details == nil {
		details = map[string]any{}
	}
	return AuditInsertParams{ID: r.ID, Time: r.Time, ActorType: r.Actor.Type, ActorID: r.Actor.ID, ActorToken: r.Actor.Token,
		Action: r.Action,
		Target: r.Target, Project: r.Project, Outcome: r.Outcome, RequestID: r.RequestID, Details: store.JSON(details)}
}

// ListParams filters and pages the log. Empty filters match everything.
type ListParams struct {
	// Project, when set, keeps that project's records (the caller's).
	Project string
	Action  string
	Target  string
	// Actor is "type:id", an id alone, or "token:ID" (the token's id).
	Actor string
	// Since and Until bound the time (Until exclusive); zero is unbounded.
	Since, Until time.Time
	Page         store.PageRequest
}

// List returns a page of records, oldest first (in the order they were
// written).
func (s *Service) List(ctx context.Context, p ListParams) (store.Page[Record], error) {
	until := p.Until
	if until.IsZero() {
		until = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	size := cmp.Or(p.Page.Size, store.DefaultPageSize)
	_, after := p.Page.Keyset()
	var seq int64
	if after != "" {
		var err error
		if seq, err = strconv.ParseInt(after, 10, 64); err != nil {
			return store.Page[Record]{}, fmt.Errorf("%w: not an audit page", store.ErrInvalidPageToken)
		}
	}
	rows, err := s.q.AuditList(ctx, s.db, AuditListParams{Project: p.Project, Action: p.Action, Target: p.Target,
		Actor: p.Actor, Since: p.Since.UTC(), Until: until.UTC(), AfterSeq: seq, Limit: int64(size + 1)})
	if err != nil {
		return store.Page[Record]{}, fmt.Errorf("list audit records: %w", err)
	}
	records := make([]Record, 0, len(rows))
	for _, row := range rows {
		r := Record{seq: row.Seq, ID: row.ID, Time: row.Time, Actor: Actor{Type: row.ActorType, ID: row.ActorID,
			Token: row.ActorToken}, Action: row.Action, Target: row.Target, Project: row.Project, Outcome: row.Outcome, RequestID: row.RequestID}
		if err := json.Unmarshal(row.Details, &r.Details); err != nil {
			return store.Page[Record]{}, fmt.Errorf("list audit records: read audit record %s: %w", r.ID, err)
		}
		records = append(records, r)
	}
	return store.NewPage(records, p.Page, func(r Record) store.Cursor {
		return store.Cursor{Time: r.Time, ID: strconv.FormatInt(r.seq, 10)}
	}), nil
}
