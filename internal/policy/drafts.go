package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stewardhq/steward/internal/invalid"
)

// maxDrafts bounds the draft policies one evaluation may bring.
const maxDrafts = 20

// EvaluateWithDrafts is [Service.Evaluate] as if the draft policies were
// stored: a draft replaces the stored policy with its id, or joins the
// chain under a new one, and a disabled draft takes its stored namesake
// out. Nothing is stored. Drafts are checked as a create checks them
// (an *invalid.Error naming `policies[i].…`, an [*InvalidPolicyError]).
func (s *Service) EvaluateWithDrafts(ctx context.Context, p EvaluateParams, drafts []CreateParams) (Result, error) {
	snap := s.current.Load()
	if snap == nil {
		return Result{}, ErrNotLoaded
	}
	if len(drafts) == 0 {
		return s.Evaluate(ctx, p)
	}
	if len(drafts) > maxDrafts {
		return Result{}, invalid.New("policies", "at most %d draft policies per evaluation", maxDrafts)
	}
	ps := make([]Policy, 0, len(snap.chain)+len(drafts))
	fresh := map[string]*module{}
	ids := map[string]bool{}
	for i, d := range drafts {
		pol := Policy{
			ID: d.ID, DisplayName: d.DisplayName, PolicyType: d.PolicyType, Priority: d.Priority,
			LabelSelector: d.LabelSelector, RegoCode: d.RegoCode, Enabled: d.Enabled == nil || *d.Enabled,
		}
		if pol.ID == "" {
			pol.ID = fmt.Sprintf("draft-%d", i+1)
		}
		if pol.DisplayName == "" {
			pol.DisplayName = pol.ID
		}
		if pol.Priority == 0 {
			pol.Priority = DefaultPriority
		}
		if ids[pol.ID] {
			return Result{}, invalid.New(fmt.Sprintf("policies[%d].id", i), "names another draft's policy too")
		}
		ids[pol.ID] = true
		if err := validate(pol); err != nil {
			return Result{}, prefixFields(fmt.Sprintf("policies[%d].", i), err)
		}
		mod, err := compileModule(ctx, pol)
		if err != nil {
			return Result{}, err
		}
		if err := checkOutputKeys(pol, mod); err != nil {
			return Result{}, err
		}
		fresh[moduleKey(pol)] = mod
		ps = append(ps, pol)
	}
	for _, e := range snap.chain {
		if !ids[e.policy.ID] {
			ps = append(ps, e.policy)
		}
	}
	// A draft whose package a stored policy also uses is blamed, not the
	// stored one: the draft is what the caller can change (or give the
	// stored policy's id, to stand in for it).
	blame := ""
	if len(drafts) == 1 {
		blame = ps[0].ID
	}
	trial, err := buildSnapshot(ctx, snap.revision, ps, snap, fresh, blame)
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.EvaluationTimeout, errChainTimeout)
	defer cancel()
	return evaluate(ctx, slices.Clip(trial.chain), s.schemas, p)
}

// prefixFields puts prefix before the field names of an *invalid.Error.
func prefixFields(prefix string, err error) error {
	var ie *invalid.Error
	if !errors.As(err, &ie) {
		return err
	}
	out := &invalid.Error{Fields: make([]invalid.Field, len(ie.Fields))}
	for i, f := range ie.Fields {
		out.Fields[i] = invalid.Field{Field: prefix + f.Field, Message: f.Message}
	}
	return out
}
