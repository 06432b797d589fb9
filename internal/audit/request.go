package audit

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"sync"

	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/store"
)

// request is the record of one mutating HTTP request, carried by its
// context. It is a store.TxHook: the first transaction the request commits
// writes it (the change and its record commit together). Its id is fixed,
// so a transaction run again, or a second one, writes it once.
type request struct {
	s       *Service
	mu      sync.Mutex
	rec     Record
	written bool
}

type requestKey struct{}

func (p *request) BeforeCommit(ctx context.Context, tx *store.Tx) error {
	p.mu.Lock()
	rec, written := p.rec, p.written
	p.mu.Unlock()
	if written {
		return nil
	}
	rec.Outcome = OutcomeSuccess
	return WriteTx(ctx, tx, rec)
}

func (p *request) Finished(committed bool) {
	if committed {
		p.mu.Lock()
		p.written = true
		p.mu.Unlock()
	}
}

func fromEntry(e httpapi.AuditEntry) Record {
	return Record{ID: store.NewID(), Actor: Actor{Type: e.Actor.Type, ID: e.Actor.ID, Token: e.Actor.Token},
		Action: e.Action,
		Target: e.Target, Project: e.Project, RequestID: e.RequestID}
}

// Begin implements httpapi.Auditor.
func (s *Service) Begin(ctx context.Context, e httpapi.AuditEntry) context.Context {
	p := &request{s: s, rec: fromEntry(e)}
	return store.WithTxHook(context.WithValue(ctx, requestKey{}, p), p)
}

// Finish implements httpapi.Auditor: a request that committed no
// transaction is recorded now, with the outcome its status says.
func (s *Service) Finish(ctx context.Context, status int, reason string) {
	p, ok := ctx.Value(requestKey{}).(*request)
	if !ok {
		return
	}
	p.mu.Lock()
	rec, written := p.rec, p.written
	p.written = true
	p.mu.Unlock()
	if written {
		return
	}
	s.writeOutcome(context.WithoutCancel(store.WithoutTxHook(ctx)), rec, status, reason)
}

// Denied implements httpapi.Auditor.
func (s *Service) Denied(ctx context.Context, e httpapi.AuditEntry, status int, reason string) {
	rec := fromEntry(e)
	if rec.Actor.Type == "" {
		rec.Actor.Type = "anonymous"
	}
	s.writeOutcome(context.WithoutCancel(ctx), rec, status, reason)
}

func (s *Service) writeOutcome(ctx context.Context, rec Record, status int, reason string) {
	rec.Outcome = OutcomeSuccess
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		rec.Outcome = OutcomeDenied
	case status >= 400:
		rec.Outcome = OutcomeError
	}
	if status >= 400 {
		rec.Details = maps.Clone(rec.Details)
		if rec.Details == nil {
			rec.Details = map[string]any{}
		}
		rec.Details["status"], rec.Details["reason"] = status, reason
	}
	if err := s.Write(ctx, rec); err != nil {
		// The answer is sent; the log is what can say a record is missing.
		slog.Default().ErrorContext(ctx, "audit record not written", "action", rec.Action, "target", rec.Target,
			"request_id", rec.RequestID, "error", err)
	}
}

// Describe refines the record of the request ctx carries, before it is
// written: target, when not "", replaces the one named after the route (a
// create whose id the server chose), and details are added (a force
// delete's reason). Outside a request it does nothing.
func Describe(ctx context.Context, target string, details map[string]any) {
	p, ok := ctx.Value(requestKey{}).(*request)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if target != "" {
		p.rec.Target = target
	}
	if len(details) > 0 {
		p.rec.Details = maps.Clone(p.rec.Details)
		if p.rec.Details == nil {
			p.rec.Details = map[string]any{}
		}
		maps.Copy(p.rec.Details, details)
	}
}
