package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

func scanOrder(row store.Scanner) (Order, error) {
	var o Order
	var labels, values, attrs, validation json.RawMessage
	var status string
	err := row.Scan(&o.ID, &o.Project, &o.CatalogItemID, &o.ServiceType, &o.DisplayName, &labels, &values,
		&o.ParentID, &o.State, &o.Lifecycle, &o.Version, &o.Generation, &attrs, &o.InstanceID, &o.ProviderName,
		&status, &o.StatusMessage, &o.CreateTime, &o.UpdateTime, &o.DeletedAt, &o.Terminal, &o.Identity,
		&o.PendingInstanceID, &validation, &o.LastError)
	if errors.Is(err, store.ErrNotFound) {
		return Order{}, ErrOrderNotFound
	}
	if err != nil {
		return Order{}, fmt.Errorf("read order: %w", err)
	}
	o.Status = provider.Status(status)
	for _, f := range []struct {
		raw json.RawMessage
		dst any
	}{{labels, &o.Labels}, {values, &o.UserValues}, {attrs, &o.Attributes}} {
		if err := json.Unmarshal(f.raw, f.dst); err != nil {
			return Order{}, fmt.Errorf("read order %s: %w", o.ID, err)
		}
	}
	if o.validation, err = decodeValidation(validation); err != nil {
		return Order{}, fmt.Errorf("read order %s validation: %w", o.ID, err)
	}
	return o, nil
}

// insertOrderTx stores a new order as it stands after its create and the
// transfers that followed in the same transaction.
func (s *Service) insertOrderTx(ctx context.Context, tx *store.Tx, o *Order) error {
	_, err := tx.Exec(ctx, s.q.Get("OrderInsert"), o.ID, o.Project, o.CatalogItemID, o.ServiceType, o.DisplayName,
		store.JSON(nonNilMap(o.Labels)), store.JSON(nonNilSlice(o.UserValues)), o.ParentID, o.State, o.Lifecycle,
		o.Version, o.Generation, store.JSON(o.Attributes), o.InstanceID, o.ProviderName, string(o.Status),
		o.StatusMessage, o.CreateTime, o.UpdateTime, o.Terminal, o.Identity, o.PendingInstanceID,
		store.JSON(o.validationJSON()), o.LastError)
	if errors.Is(err, store.ErrAlreadyExists) {
		return &OrderExistsError{ID: o.ID, Identity: o.Identity}
	}
	return err
}

// saveOrderTx writes o back, checking that nobody changed it since it was
// read at version read.
func (s *Service) saveOrderTx(ctx context.Context, tx *store.Tx, o *Order, read int64) error {
	o.UpdateTime = s.now()
	n, err := tx.Exec(ctx, s.q.Get("OrderSave"), o.DisplayName, store.JSON(nonNilMap(o.Labels)),
		store.JSON(nonNilSlice(o.UserValues)), o.State, o.Version, o.Generation, store.JSON(o.Attributes),
		o.InstanceID, o.ProviderName, string(o.Status), o.StatusMessage, o.UpdateTime, o.DeletedAt, o.Terminal,
		o.Identity, o.PendingInstanceID, store.JSON(o.validationJSON()), o.LastError, o.ID, read)
	if err != nil {
		return fmt.Errorf("save order %s: %w", o.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("save order %s: %w", o.ID, store.ErrStale)
	}
	return nil
}

// lockOrderTx reads an order for a transfer in tx (locking its row on
// PostgreSQL).
func (s *Service) lockOrderTx(ctx context.Context, tx *store.Tx, id string) (Order, error) {
	return scanOrder(tx.QueryRow(ctx, s.q.Get("OrderLock"), id))
}

// recordEventTx appends an event to the order's lifecycle log.
func (s *Service) recordEventTx(ctx context.Context, tx *store.Tx, orderID string, e Event) error {
	_, err := tx.Exec(ctx, s.q.Get("OrderEventInsert"), orderID, e.Version, e.Time, e.Trigger, e.From, e.To,
		e.Operation, e.Error)
	if err != nil {
		return fmt.Errorf("record event %d of order %s: %w", e.Version, orderID, err)
	}
	return nil
}

// eventCursorTime is the time of every event page token: events page by
// version, which the cursor's id carries.
var eventCursorTime = time.Unix(1, 0).UTC()

// Events lists an order's lifecycle log, oldest first. A missing order is
// [ErrOrderNotFound].
func (s *Service) Events(ctx context.Context, project, ref string, page store.PageRequest) (store.Page[Event], error) {
	o, err := s.Order(ctx, project, ref, true)
	if err != nil {
		return store.Page[Event]{}, err
	}
	size := page.Size
	if size == 0 {
		size = store.DefaultPageSize
	}
	var after int64
	if _, id := page.Keyset(); id != "" {
		if after, err = strconv.ParseInt(id, 10, 64); err != nil {
			return store.Page[Event]{}, store.ErrInvalidPageToken
		}
	}
	rows, err := s.cfg.DB.Query(ctx, s.q.Get("OrderEventList"), o.ID, after, size+1)
	if err != nil {
		return store.Page[Event]{}, fmt.Errorf("list events of %s: %w", o.ID, err)
	}
	events, err := store.Collect(rows, func(row store.Scanner) (Event, error) {
		var e Event
		err := row.Scan(&e.Version, &e.Time, &e.Trigger, &e.From, &e.To, &e.Operation, &e.Error)
		return e, err
	})
	if err != nil {
		return store.Page[Event]{}, fmt.Errorf("list events of %s: %w", o.ID, err)
	}
	return store.NewPage(events, size, func(e Event) store.Cursor {
		return store.Cursor{Time: eventCursorTime, ID: strconv.FormatInt(e.Version, 10)}
	}), nil
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
