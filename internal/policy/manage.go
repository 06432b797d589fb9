package policy

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/store"
)

// Create stores a new policy and puts it in force. Its Rego must compile
// ([*InvalidPolicyError], and nothing changes, otherwise); a taken id, or a
// priority or display name taken in its level, is ErrPolicyExists.
func (s *Service) Create(ctx context.Context, p CreateParams) (Policy, error) {
	pol := Policy{
		ID: p.ID, DisplayName: p.DisplayName, PolicyType: p.PolicyType, Priority: p.Priority,
		LabelSelector: p.LabelSelector, RegoCode: p.RegoCode, Enabled: p.Enabled == nil || *p.Enabled,
	}
	if pol.Priority == 0 {
		pol.Priority = DefaultPriority
	}
	if err := validate(pol); err != nil {
		return Policy{}, err
	}
	if pol.ID == "" {
		pol.ID = store.NewID()
		audit.Describe(ctx, "policy:"+pol.ID, nil)
	}
	t := store.Now(s.cfg.Now)
	pol.Version, pol.CreateTime, pol.UpdateTime = 1, t, t
	err := s.change(ctx, func(tx *store.Tx) (*Policy, error) {
		if _, err := s.policyGet(ctx, tx, pol.ID); err == nil {
			return nil, fmt.Errorf("%w: id %q is taken", ErrPolicyExists, pol.ID)
		} else if !errors.Is(err, ErrPolicyNotFound) {
			return nil, err
		}
		if err := s.checkClashes(ctx, tx, pol); err != nil {
			return nil, err
		}
		_, err := s.q.PolicyInsert(ctx, tx, PolicyInsertParams{ID: pol.ID, DisplayName: pol.DisplayName,
			PolicyType: string(pol.PolicyType), Priority: int64(pol.Priority), LabelSelector: selectorArg(pol.LabelSelector),
			RegoCode: pol.RegoCode, Enabled: pol.Enabled, CreateTime: t, UpdateTime: t})
		return &pol, err
	})
	if err != nil {
		return Policy{}, err
	}
	s.log.InfoContext(ctx, "policy created", "policy_id", pol.ID, "policy_type", pol.PolicyType, "enabled", pol.Enabled)
	return pol, nil
}

// Policy returns the policy with the id, or ErrPolicyNotFound.
func (s *Service) Policy(ctx context.Context, id string) (Policy, error) {
	return s.policyGet(ctx, s.cfg.DB, id)
}

// ListParams filters and pages policies. Zero fields do not filter.
type ListParams struct {
	PolicyType Type
	Enabled    *bool
	Page       store.PageRequest
}

// Policies lists policies, oldest first.
func (s *Service) Policies(ctx context.Context, p ListParams) (store.Page[Policy], error) {
	return s.policyList(ctx, p)
}

// Update applies a merge patch to a policy and puts the result in force.
// ifMatch, when not nil, is the version the caller read: another change in
// between gives store.ErrStale. Errors are Create's, and ErrPolicyNotFound.
func (s *Service) Update(ctx context.Context, id string, patch Patch, ifMatch *int64) (Policy, error) {
	var out Policy
	err := s.change(ctx, func(tx *store.Tx) (*Policy, error) {
		cur, err := s.policyGet(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		if ifMatch != nil && *ifMatch != cur.Version {
			return nil, store.ErrStale
		}
		next, err := patch.apply(cur)
		if err != nil {
			return nil, err
		}
		if err := validate(next); err != nil {
			return nil, err
		}
		if err := s.checkClashes(ctx, tx, next); err != nil {
			return nil, err
		}
		next.Version, next.UpdateTime = cur.Version+1, store.Now(s.cfg.Now)
		n, err := s.q.PolicyUpdate(ctx, tx, PolicyUpdateParams{DisplayName: next.DisplayName,
			Priority: int64(next.Priority), LabelSelector: selectorArg(next.LabelSelector), RegoCode: next.RegoCode,
			Enabled: next.Enabled, UpdateTime: next.UpdateTime, ID: cur.ID, Version: cur.Version})
		if err == nil && n == 0 {
			err = store.ErrStale
		}
		out = next
		return &out, err
	})
	if err != nil {
		return Policy{}, err
	}
	s.log.InfoContext(ctx, "policy updated", "policy_id", out.ID, "enabled", out.Enabled)
	return out, nil
}

// Delete removes a policy and puts the set without it in force. ifMatch is
// as for Update.
func (s *Service) Delete(ctx context.Context, id string, ifMatch *int64) error {
	err := s.change(ctx, func(tx *store.Tx) (*Policy, error) {
		cur, err := s.policyGet(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		if ifMatch != nil && *ifMatch != cur.Version {
			return nil, store.ErrStale
		}
		n, err := s.q.PolicyDelete(ctx, tx, cur.ID, cur.Version)
		if err == nil && n == 0 {
			err = store.ErrStale
		}
		return nil, err
	})
	if err == nil {
		s.log.InfoContext(ctx, "policy deleted", "policy_id", id)
	}
	return err
}

// change runs one policy change atomically with its recompilation. In one
// transaction it bumps the revision (which serialises policy writers on
// every replica), lets write change the rows and return the policy it
// wrote (nil for a delete), compiles that policy, then compiles the set
// the transaction now holds. Any error rolls the change back, so the set in
// force stays as it was; on commit the new set is installed at once, and
// other replicas load it on their next Refresh.
func (s *Service) change(ctx context.Context, write func(tx *store.Tx) (*Policy, error)) error {
	var next *snapshot
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		rev, err := s.revisionBump(ctx, tx)
		if err != nil {
			return err
		}
		changed, err := write(tx)
		if errors.Is(err, store.ErrAlreadyExists) {
			// A concurrent writer won a unique index between the checks and the write.
			return fmt.Errorf("%w: %w", ErrPolicyExists, err)
		}
		if err != nil {
			return err
		}
		var fresh map[string]*module
		blame := ""
		if changed != nil {
			// Compiled even when disabled: a stored policy always compiles,
			// so enabling it later cannot fail on its code.
			mod, err := compileModule(ctx, *changed)
			if err != nil {
				return err
			}
			if err := checkOutputKeys(*changed, mod); err != nil {
				return err
			}
			fresh, blame = map[string]*module{moduleKey(*changed): mod}, changed.ID
		}
		ps, err := s.policyListEnabled(ctx, tx)
		if err != nil {
			return err
		}
		next, err = buildSnapshot(ctx, rev, ps, s.current.Load(), fresh, blame)
		return err
	})
	if err != nil {
		return err
	}
	s.install(next)
	return nil
}

// checkClashes refuses a priority or display name another policy of the
// same level holds.
func (s *Service) checkClashes(ctx context.Context, tx *store.Tx, p Policy) error {
	clashes, err := s.policyListClashes(ctx, tx, p)
	if err != nil {
		return err
	}
	for _, c := range clashes {
		if c.Priority == p.Priority {
			return fmt.Errorf("%w: priority %d in %s is held by policy %s", ErrPolicyExists, p.Priority, p.PolicyType, c.Ref())
		}
		return fmt.Errorf("%w: display name %q in %s is held by policy %s", ErrPolicyExists, p.DisplayName, p.PolicyType, c.ID)
	}
	return nil
}
