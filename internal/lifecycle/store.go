package lifecycle

import (
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

func scanLifecycle(row store.Scanner) (Lifecycle, error) {
	var l Lifecycle
	var states, transfers json.RawMessage
	var compact string
	err := row.Scan(&l.ID, &l.InitialState, &states, &transfers, &compact, &l.Version, &l.CreateTime, &l.UpdateTime)
	if errors.Is(err, store.ErrNotFound) {
		return Lifecycle{}, ErrLifecycleNotFound
	}
	if err != nil {
		return Lifecycle{}, fmt.Errorf("read lifecycle: %w", err)
	}
	if err := json.Unmarshal(states, &l.States); err != nil {
		return Lifecycle{}, fmt.Errorf("read lifecycle %s states: %w", l.ID, err)
	}
	if err := json.Unmarshal(transfers, &l.Transfers); err != nil {
		return Lifecycle{}, fmt.Errorf("read lifecycle %s transfers: %w", l.ID, err)
	}
	if compact != "" {
		l.Compact = json.RawMessage(compact)
	}
	return l, nil
}

// lifecycleGet reads one stored lifecycle.
func (s *Service) lifecycleGet(ctx context.Context, id string) (Lifecycle, error) {
	return s.lifecycleGetQ(ctx, s.cfg.DB, id)
}

// lifecycleGetQ reads a stored lifecycle through q (a transaction, so a
// transfer holding one never waits for a second connection).
func (s *Service) lifecycleGetQ(ctx context.Context, q store.Querier, id string) (Lifecycle, error) {
	// LifecycleGet and LifecycleList read the same columns: one scanner
	// turns both into a Lifecycle.
	l, err := scanLifecycle(q.QueryRow(ctx, s.q.lifecycleGet, id))
	if err != nil {
		return Lifecycle{}, fmt.Errorf("lifecycle %q: %w", id, err)
	}
	return l, nil
}

// lifecycleListAfter reads up to limit stored lifecycles whose id sorts
// after after, by id.
func (s *Service) lifecycleListAfter(ctx context.Context, after string, limit int) ([]Lifecycle, error) {
	rows, err := s.cfg.DB.Query(ctx, s.q.lifecycleList, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list lifecycles: %w", err)
	}
	ls, err := store.Collect(rows, scanLifecycle)
	if err != nil {
		return nil, fmt.Errorf("list lifecycles: %w", err)
	}
	return ls, nil
}

// jsonArg encodes a definition's list for its JSON column.
func jsonArg(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("lifecycle: encode %T: %v", v, err)) // states and transfers always encode
	}
	return b
}
