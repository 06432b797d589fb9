package lifecycle

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/resourceid"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
)

// Lifecycle is a stored or built-in lifecycle definition (API.md,
// Lifecycles). Its Definition is always the expanded, checked form.
type Lifecycle struct {
	ID string `json:"id"`
	statemachine.Definition
	// Compact is the compact form the definition was written in, as the
	// client sent it (whitespace aside); nil when it was written in full.
	Compact json.RawMessage `json:"compact"`
	// Builtin marks the read-only lifecycles Steward ships (simple, service).
	Builtin    bool      `json:"builtin"`
	Version    int64     `json:"-"`
	CreateTime time.Time `json:"create_time"`
	UpdateTime time.Time `json:"update_time"`
}

// builtinTime is the create_time and update_time of the built-ins, which
// are not stored: the day they shipped, as for the built-in service types
// (the Unix epoch showed as an AGE of 20783d).
var builtinTime = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

// builtinLifecycles are the built-ins of package statemachine as
// lifecycles, sorted by id. Their definitions are shared with it.
var builtinLifecycles = sync.OnceValue(func() []Lifecycle {
	var out []Lifecycle
	for _, b := range statemachine.Builtins() {
		out = append(out, Lifecycle{ID: b.ID, Definition: b.Definition, Compact: b.Compact, Builtin: true, Version: 1,
			CreateTime: builtinTime, UpdateTime: builtinTime})
	}
	return out
})

// builtin returns a copy of the built-in lifecycle with the id.
func builtin(id string) (Lifecycle, bool) {
	for _, l := range builtinLifecycles() {
		if l.ID == id {
			return l.clone(), true
		}
	}
	return Lifecycle{}, false
}

// clone copies the lists, so a caller may change what it got.
func (l Lifecycle) clone() Lifecycle {
	l.States = slices.Clone(l.States)
	l.Transfers = slices.Clone(l.Transfers)
	l.Compact = slices.Clone(l.Compact)
	return l
}

// CreateParams is a new lifecycle.
type CreateParams struct {
	// ID is the lifecycle's id (AEP-122, package resourceid); empty generates a
	// UUID.
	ID string
	statemachine.Source
}

// Create expands and checks p's definition (an [*invalid.Error] naming
// each bad field; see [statemachine.Source.Expand] and package
// statemachine's doc) and stores it. A taken id, a built-in's included, is
// [ErrLifecycleExists], so a create retried with its id never makes a
// second lifecycle.
func (s *Service) Create(ctx context.Context, p CreateParams) (Lifecycle, error) {
	switch {
	case p.ID == "":
		p.ID = store.NewID()
		audit.Describe(ctx, "lifecycle:"+p.ID, nil)
	case !resourceid.Valid(p.ID):
		return Lifecycle{}, resourceid.Check("id", p.ID)
	}
	if _, ok := builtin(p.ID); ok {
		return Lifecycle{}, fmt.Errorf("lifecycle %q is built in: %w", p.ID, ErrLifecycleExists)
	}
	def, compact, err := p.Expand()
	if err != nil {
		return Lifecycle{}, err
	}
	t := s.now()
	l := Lifecycle{ID: p.ID, Definition: def, Compact: compact, Version: 1, CreateTime: t, UpdateTime: t}
	_, err = s.q.LifecycleInsert(ctx, s.cfg.DB, LifecycleInsertParams{ID: l.ID, InitialState: l.InitialState,
		States: jsonArg(l.States), Transfers: jsonArg(l.Transfers), Compact: string(l.Compact), CreateTime: t, UpdateTime: t})
	if errors.Is(err, store.ErrAlreadyExists) {
		return Lifecycle{}, fmt.Errorf("lifecycle %q: %w", l.ID, ErrLifecycleExists)
	}
	if err != nil {
		return Lifecycle{}, fmt.Errorf("create lifecycle %q: %w", l.ID, err)
	}
	s.log.InfoContext(ctx, "lifecycle created", "lifecycle_id", l.ID, "states", len(l.States),
		"transfers", len(l.Transfers), "compact", l.Compact != nil)
	return l, nil
}

// Lifecycle returns the lifecycle with the id, stored or built in, or an
// error wrapping [ErrLifecycleNotFound]. The engine reads the definition
// it runs with it.
func (s *Service) Lifecycle(ctx context.Context, id string) (Lifecycle, error) {
	if l, ok := builtin(id); ok {
		return l, nil
	}
	return s.lifecycleGet(ctx, id)
}

// LifecycleStored says whether a lifecycle with the id is stored (not
// built in): the catalog asks before a service type names it
// (catalog.StoredLifecycles).
func (s *Service) LifecycleStored(ctx context.Context, id string) (bool, error) {
	_, err := s.lifecycleGet(ctx, id)
	if errors.Is(err, ErrLifecycleNotFound) {
		return false, nil
	}
	return err == nil, err
}

// listCursorTime is the time of every lifecycle page token: lifecycles
// page by id alone, and a cursor needs a time.
var listCursorTime = time.Unix(1, 0).UTC()

// Lifecycles returns a page of the lifecycles, the built-ins among the
// stored ones, sorted by id. It reads at most one page and one row of
// stored lifecycles.
func (s *Service) Lifecycles(ctx context.Context, page store.PageRequest) (store.Page[Lifecycle], error) {
	size := cmp.Or(page.Size, store.DefaultPageSize)
	_, after := page.Keyset()
	rows, err := s.lifecycleListAfter(ctx, after, size+1)
	if err != nil {
		return store.Page[Lifecycle]{}, err
	}
	for _, b := range builtinLifecycles() {
		if b.ID > after {
			rows = append(rows, b.clone())
		}
	}
	slices.SortFunc(rows, func(a, b Lifecycle) int { return cmp.Compare(a.ID, b.ID) })
	return store.NewPage(rows, page, func(l Lifecycle) store.Cursor { return store.Cursor{Time: listCursorTime, ID: l.ID} }), nil
}

// ReplaceParams replaces a lifecycle's definition.
type ReplaceParams struct {
	ID string
	statemachine.Source
	// IfMatch, when not nil, is the version the caller read: another
	// version gives [store.ErrStale].
	IfMatch *int64
}

// Replace replaces the definition of the stored lifecycle p.ID, checked as
// [Service.Create] checks one. A built-in is [ErrLifecycleReadOnly], a
// missing one [ErrLifecycleNotFound]. Orders already following the
// lifecycle see the new definition from their next transfer on.
func (s *Service) Replace(ctx context.Context, p ReplaceParams) (Lifecycle, error) {
	if _, ok := builtin(p.ID); ok {
		return Lifecycle{}, fmt.Errorf("lifecycle %q: %w", p.ID, ErrLifecycleReadOnly)
	}
	cur, err := s.lifecycleGet(ctx, p.ID)
	if err != nil {
		return Lifecycle{}, err
	}
	if p.IfMatch != nil && *p.IfMatch != cur.Version {
		return Lifecycle{}, store.ErrStale
	}
	def, compact, err := p.Expand()
	if err != nil {
		return Lifecycle{}, err
	}
	next := Lifecycle{ID: cur.ID, Definition: def, Compact: compact, Version: cur.Version + 1,
		CreateTime: cur.CreateTime, UpdateTime: s.now()}
	n, err := s.q.LifecycleUpdate(ctx, s.cfg.DB, LifecycleUpdateParams{InitialState: next.InitialState,
		States: jsonArg(next.States), Transfers: jsonArg(next.Transfers), Compact: string(next.Compact),
		UpdateTime: next.UpdateTime, ID: cur.ID, Version: cur.Version})
	if err != nil {
		return Lifecycle{}, fmt.Errorf("replace lifecycle %q: %w", p.ID, err)
	}
	if n == 0 {
		return Lifecycle{}, store.ErrStale
	}
	s.log.InfoContext(ctx, "lifecycle replaced", "lifecycle_id", next.ID, "version", next.Version)
	return next, nil
}

// Delete removes the stored lifecycle with the id. A built-in is
// [ErrLifecycleReadOnly], a missing one [ErrLifecycleNotFound]. While
// [Config.Usage] names service types that use it, it is an [*InUseError].
// ifMatch, when not nil, is the version the caller read: another version
// gives [store.ErrStale].
//
// NOTE: Usage is asked before the delete, not in its transaction (the
// catalog answers from its own state), so a service type created in
// between can end up naming a lifecycle that is gone; the engine then
// fails that type's orders with [ErrLifecycleNotFound].
func (s *Service) Delete(ctx context.Context, id string, ifMatch *int64) error {
	if _, ok := builtin(id); ok {
		return fmt.Errorf("lifecycle %q: %w", id, ErrLifecycleReadOnly)
	}
	cur, err := s.lifecycleGet(ctx, id)
	if err != nil {
		return err
	}
	if ifMatch != nil && *ifMatch != cur.Version {
		return store.ErrStale
	}
	if s.cfg.Usage != nil {
		types, err := s.cfg.Usage.ServiceTypesUsingLifecycle(ctx, id)
		if err != nil {
			return fmt.Errorf("find service types using lifecycle %q: %w", id, err)
		}
		if len(types) > 0 {
			return &InUseError{LifecycleID: id, ServiceTypes: slices.Sorted(slices.Values(types))}
		}
	}
	n, err := s.q.LifecycleDelete(ctx, s.cfg.DB, cur.ID, cur.Version)
	if err != nil {
		return fmt.Errorf("delete lifecycle %q: %w", id, err)
	}
	if n == 0 {
		return store.ErrStale
	}
	s.log.InfoContext(ctx, "lifecycle deleted", "lifecycle_id", id)
	return nil
}
