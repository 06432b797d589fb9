package policy

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/store"
)

//go:embed sql
var sqlFS embed.FS

type scanner = store.Scanner

func scanPolicy(row scanner) (Policy, error) {
	var p Policy
	var selector json.RawMessage
	var policyType string
	err := row.Scan(&p.ID, &p.DisplayName, &policyType, &p.Priority, &selector, &p.RegoCode, &p.Enabled,
		&p.Version, &p.CreateTime, &p.UpdateTime)
	if errors.Is(err, store.ErrNotFound) {
		return Policy{}, ErrPolicyNotFound
	}
	if err != nil {
		return Policy{}, fmt.Errorf("read policy: %w", err)
	}
	p.PolicyType = Type(policyType)
	if err := json.Unmarshal(selector, &p.LabelSelector); err != nil {
		return Policy{}, fmt.Errorf("read policy %s label_selector: %w", p.ID, err)
	}
	return p, nil
}

// policyGet reads one policy in q (the DB or a transaction).
func (s *Service) policyGet(ctx context.Context, q store.Querier, id string) (Policy, error) {
	return scanPolicy(q.QueryRow(ctx, s.q.Get("PolicyGet"), id))
}

// policyListEnabled reads the chain's policies in q.
func (s *Service) policyListEnabled(ctx context.Context, q store.Querier) ([]Policy, error) {
	rows, err := q.Query(ctx, s.q.Get("PolicyListEnabled"))
	if err != nil {
		return nil, fmt.Errorf("list enabled policies: %w", err)
	}
	return store.Collect(rows, scanPolicy)
}

// policyListClashes reads the policies other than p that hold p's
// priority or display name in its level.
func (s *Service) policyListClashes(ctx context.Context, tx *store.Tx, p Policy) ([]Policy, error) {
	rows, err := tx.Query(ctx, s.q.Get("PolicyListClashes"), p.ID, string(p.PolicyType), p.Priority, p.DisplayName)
	if err != nil {
		return nil, fmt.Errorf("check policy clashes: %w", err)
	}
	return store.Collect(rows, scanPolicy)
}

// policyList reads one page of policies.
func (s *Service) policyList(ctx context.Context, p ListParams) (store.Page[Policy], error) {
	size := cmp.Or(p.Page.Size, store.DefaultPageSize)
	at, after := p.Page.Keyset()
	rows, err := s.cfg.DB.Query(ctx, s.q.Get("PolicyList"), string(p.PolicyType), string(p.PolicyType),
		p.Enabled, p.Enabled, at, after, size+1)
	if err != nil {
		return store.Page[Policy]{}, fmt.Errorf("list policies: %w", err)
	}
	ps, err := store.Collect(rows, scanPolicy)
	if err != nil {
		return store.Page[Policy]{}, fmt.Errorf("list policies: %w", err)
	}
	return store.NewPage(ps, size, func(p Policy) store.Cursor { return store.Cursor{Time: p.CreateTime, ID: p.ID} }), nil
}

// revisionBump bumps policy_revision; as the first statement of a change it
// serialises policy writers across replicas.
func (s *Service) revisionBump(ctx context.Context, tx *store.Tx) (int64, error) {
	var rev int64
	if err := tx.QueryRow(ctx, s.q.Get("PolicyRevisionBump")).Scan(&rev); err != nil {
		return 0, fmt.Errorf("bump policy revision: %w", err)
	}
	return rev, nil
}

func (s *Service) revisionGet(ctx context.Context) (int64, error) {
	var rev int64
	if err := s.cfg.DB.QueryRow(ctx, s.q.Get("PolicyRevisionGet")).Scan(&rev); err != nil {
		return 0, fmt.Errorf("read policy revision: %w", err)
	}
	return rev, nil
}

// selectorArg is a label selector for its JSON column; nil is stored as {}.
func selectorArg(m map[string]string) store.JSONArg {
	if m == nil {
		m = map[string]string{}
	}
	return store.JSON(m)
}
