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

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// policyRow is a row of the queries that read whole policies: they return
// the same columns.
type policyRow interface {
	PolicyGetRow | PolicyListRow | PolicyListClashesRow | PolicyListEnabledRow
}

func policyFromRow(r PolicyGetRow) (Policy, error) {
	p := Policy{ID: r.ID, DisplayName: r.DisplayName, PolicyType: Type(r.PolicyType), Priority: int(r.Priority),
		RegoCode: r.RegoCode, Enabled: r.Enabled, Version: r.Version, CreateTime: r.CreateTime, UpdateTime: r.UpdateTime}
	if err := json.Unmarshal(r.LabelSelector, &p.LabelSelector); err != nil {
		return Policy{}, fmt.Errorf("read policy %s label_selector: %w", p.ID, err)
	}
	return p, nil
}

func policiesFromRows[R policyRow](rows []R, err error) ([]Policy, error) {
	if err != nil {
		return nil, err
	}
	ps := make([]Policy, 0, len(rows))
	for _, r := range rows {
		p, err := policyFromRow(PolicyGetRow(r))
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// policyGet reads one policy in q (the DB or a transaction).
func (s *Service) policyGet(ctx context.Context, q store.Querier, id string) (Policy, error) {
	r, err := s.q.PolicyGet(ctx, q, id)
	if errors.Is(err, store.ErrNotFound) {
		return Policy{}, ErrPolicyNotFound
	}
	if err != nil {
		return Policy{}, fmt.Errorf("read policy: %w", err)
	}
	return policyFromRow(r)
}

// policyListEnabled reads the chain's policies in q.
func (s *Service) policyListEnabled(ctx context.Context, q store.Querier) ([]Policy, error) {
	ps, err := policiesFromRows(s.q.PolicyListEnabled(ctx, q))
	if err != nil {
		return nil, fmt.Errorf("list enabled policies: %w", err)
	}
	return ps, nil
}

// policyListClashes reads the policies other than p that hold p's
// priority or display name in its level.
func (s *Service) policyListClashes(ctx context.Context, tx *store.Tx, p Policy) ([]Policy, error) {
	ps, err := policiesFromRows(s.q.PolicyListClashes(ctx, tx, PolicyListClashesParams{ID: p.ID,
		PolicyType: string(p.PolicyType), Priority: int64(p.Priority), DisplayName: p.DisplayName}))
	if err != nil {
		return nil, fmt.Errorf("check policy clashes: %w", err)
	}
	return ps, nil
}

// policyList reads one page of policies.
func (s *Service) policyList(ctx context.Context, p ListParams) (store.Page[Policy], error) {
	size := cmp.Or(p.Page.Size, store.DefaultPageSize)
	at, after := p.Page.Keyset()
	ps, err := policiesFromRows(s.q.PolicyList(ctx, s.cfg.DB, PolicyListParams{PolicyType: string(p.PolicyType),
		Enabled: p.Enabled, AfterTime: at, AfterID: after, Limit: int64(size + 1)}))
	if err != nil {
		return store.Page[Policy]{}, fmt.Errorf("list policies: %w", err)
	}
	return store.NewPage(ps, p.Page, func(p Policy) store.Cursor { return store.Cursor{Time: p.CreateTime, ID: p.ID} }), nil
}

// revisionBump bumps policy_revision; as the first statement of a change it
// serialises policy writers across replicas.
func (s *Service) revisionBump(ctx context.Context, tx *store.Tx) (int64, error) {
	rev, err := s.q.PolicyRevisionBump(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("bump policy revision: %w", err)
	}
	return rev, nil
}

func (s *Service) revisionGet(ctx context.Context) (int64, error) {
	rev, err := s.q.PolicyRevisionGet(ctx, s.cfg.DB)
	if err != nil {
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
