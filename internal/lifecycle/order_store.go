package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

func scanOrder(row store.Scanner) (Order, error) { return scanOrderAs(row, false) }

// scanReadOrder reads a row of OrderGet, which also has the current
// instance's outputs.
func scanReadOrder(row store.Scanner) (Order, error) {
	o, err := scanOrderAs(row, false)
	o.outputsRead = err == nil
	return o, err
}

// scanListedOrder reads an order for a list: its attribute sets are kept as
// the stored JSON for the view, not decoded (a list has no use for them
// otherwise; decoding and encoding them again was a third of its CPU).
func scanListedOrder(row store.Scanner) (Order, error) {
	o, err := scanOrderAs(row, true)
	o.outputsRead = err == nil
	return o, err
}

// listedScanner reads OrderList's extra last column, whether the active
// set is there, into o.activeListed.
type listedScanner struct {
	store.Scanner
	o *Order
}

func (s listedScanner) Scan(dest ...any) error {
	return s.Scanner.Scan(append(dest, &s.o.activeListed)...)
}

func scanOrderAs(row store.Scanner, keepAttributesRaw bool) (Order, error) {
	var o Order
	var labels, values, attrs, validation, valueSets, outputs, synced json.RawMessage
	var status string
	if keepAttributesRaw {
		row = listedScanner{Scanner: row, o: &o}
	}
	err := row.Scan(&o.ID, &o.Project, &o.CatalogItemID, &o.ServiceType, &o.DisplayName, &labels, &values,
		&o.ParentID, &o.State, &o.Lifecycle, &o.Version, &o.Generation, &attrs, &o.InstanceID, &o.ProviderName,
		&status, &o.StatusMessage, &o.RestartCount, &o.CreateTime, &o.UpdateTime, &o.DeletedAt, &o.Terminal, &o.Identity,
		&o.PendingInstanceID, &validation, &o.LastError, &o.ExpireTime, &valueSets, &outputs, &synced, &o.copyingTo)
	if errors.Is(err, store.ErrNotFound) {
		return Order{}, ErrOrderNotFound
	}
	if err != nil {
		return Order{}, fmt.Errorf("read order: %w", err)
	}
	o.Status = provider.Status(status)
	o.outputsJSON = outputs
	if synced != nil {
		o.synced = new(provider.Sync)
		if err := json.Unmarshal(synced, o.synced); err != nil {
			return Order{}, fmt.Errorf("read order %s: synced: %w", o.ID, err)
		}
	}
	if keepAttributesRaw {
		o.attributesJSON, o.labelsJSON, o.userValuesJSON = attrs, labels, values
	} else {
		for _, f := range []struct {
			raw json.RawMessage
			dst any
		}{{labels, &o.Labels}, {values, &o.UserValues}, {attrs, &o.Attributes}} {
			if err := json.Unmarshal(f.raw, f.dst); err != nil {
				return Order{}, fmt.Errorf("read order %s: %w", o.ID, err)
			}
		}
	}
	if !keepAttributesRaw {
		if err := o.decodeValueSets(valueSets); err != nil {
			return Order{}, fmt.Errorf("read order %s user value sets: %w", o.ID, err)
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
	_, err := s.q.OrderInsert(ctx, tx, OrderInsertParams{ID: o.ID, Project: o.Project,
		CatalogItemID: o.CatalogItemID, ServiceType: o.ServiceType, DisplayName: o.DisplayName,
		Labels: store.JSON(nonNilMap(o.Labels)), UserValues: store.JSON(nonNilSlice(o.UserValues)),
		ParentID: o.ParentID, State: o.State, Lifecycle: o.Lifecycle, Version: o.Version, Generation: o.Generation,
		Attributes: store.JSON(o.Attributes), InstanceID: o.InstanceID, ProviderName: o.ProviderName,
		Status: string(o.Status), StatusMessage: o.StatusMessage, CreateTime: o.CreateTime, UpdateTime: o.UpdateTime,
		Terminal: o.Terminal, Identity: o.Identity, PendingInstanceID: o.PendingInstanceID,
		Validation: store.JSON(o.validationJSON()), LastError: o.LastError, RequestKey: o.requestKey,
		UserValueSets: store.JSON(o.valueSets)})
	if errors.Is(err, store.ErrAlreadyExists) {
		return &OrderExistsError{ID: o.ID, Identity: o.Identity}
	}
	if err != nil {
		return err
	}
	s.changedTx(tx, o.ID)
	return s.flushEventsTx(ctx, tx, o)
}

// saveOrderTx writes o back, checking that nobody changed it since it was
// read at version read.
func (s *Service) saveOrderTx(ctx context.Context, tx *store.Tx, o *Order, read int64) error {
	o.UpdateTime = s.now()
	var n int64
	var err error
	if o.wide {
		n, err = s.q.OrderSave(ctx, tx, OrderSaveParams{DisplayName: o.DisplayName,
			Labels: store.JSON(nonNilMap(o.Labels)), UserValues: store.JSON(nonNilSlice(o.UserValues)),
			State: o.State, Version: o.Version, Generation: o.Generation, Attributes: store.JSON(o.Attributes),
			InstanceID: o.InstanceID, ProviderName: o.ProviderName, Status: string(o.Status),
			StatusMessage: o.StatusMessage, UpdateTime: o.UpdateTime, DeletedAt: o.DeletedAt, Terminal: o.Terminal,
			Identity: o.Identity, PendingInstanceID: o.PendingInstanceID, Validation: store.JSON(o.validationJSON()),
			LastError: o.LastError, ExpireTime: o.ExpireTime, UserValueSets: store.JSON(o.valueSets),
			RestartCount: o.RestartCount, ID: o.ID, ReadVersion: read})
	} else {
		// Most saves are a status report or a transfer without operation:
		// the attribute sets are as read, so they are not encoded again.
		n, err = s.q.OrderSaveState(ctx, tx, OrderSaveStateParams{State: o.State, Version: o.Version,
			Generation: o.Generation, InstanceID: o.InstanceID, ProviderName: o.ProviderName, Status: string(o.Status),
			StatusMessage: o.StatusMessage, UpdateTime: o.UpdateTime, DeletedAt: o.DeletedAt, Terminal: o.Terminal,
			PendingInstanceID: o.PendingInstanceID, LastError: o.LastError, ExpireTime: o.ExpireTime,
			RestartCount: o.RestartCount, ID: o.ID, ReadVersion: read})
	}
	if err != nil {
		return fmt.Errorf("save order %s: %w", o.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("save order %s: %w", o.ID, store.ErrStale)
	}
	s.changedTx(tx, o.ID)
	return s.flushEventsTx(ctx, tx, o)
}

// changedTx tells Config.Changed of order id once tx commits.
func (s *Service) changedTx(tx *store.Tx, id string) {
	if s.cfg.Changed != nil {
		tx.AfterCommit(func() { s.cfg.Changed(id) })
	}
}

// lockOrderTx reads an order for a transfer in tx (locking its row on
// PostgreSQL).
func (s *Service) lockOrderTx(ctx context.Context, tx *store.Tx, id string) (Order, error) {
	// OrderGet, OrderLock and OrderList read an order's row: scanOrder
	// decodes that one shape for all three.
	return scanOrder(tx.QueryRow(ctx, s.q.orderLock, id))
}

// recordEvent appends an event to the order's lifecycle log; it is
// written with the order (insertOrderTx, saveOrderTx), in its transaction.
func recordEvent(o *Order, e Event) {
	o.events = append(o.events, e)
}

// flushEventsTx writes the events recorded since the order was read, in
// one statement: a create and the auto transfers after it are several.
func (s *Service) flushEventsTx(ctx context.Context, tx *store.Tx, o *Order) error {
	if len(o.events) == 0 {
		return nil
	}
	base := s.q.orderEventInsert // widened below to one row of VALUES per event
	head, _, ok := strings.Cut(base, "VALUES")
	if !ok {
		return fmt.Errorf("query OrderEventInsert has no VALUES")
	}
	const cols = 8
	var b strings.Builder
	b.WriteString(head + "VALUES ")
	args := make([]any, 0, cols*len(o.events))
	for i, e := range o.events {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		for c := range cols {
			if c > 0 {
				b.WriteString(", ")
			}
			if tx.Engine() == store.Postgres {
				fmt.Fprintf(&b, "$%d", i*cols+c+1)
			} else {
				b.WriteString("?")
			}
		}
		b.WriteString(")")
		args = append(args, o.ID, e.Version, e.Time, e.Trigger, e.From, e.To, e.Operation, e.Error)
	}
	if _, err := tx.Exec(ctx, b.String(), args...); err != nil {
		return fmt.Errorf("record events of order %s: %w", o.ID, err)
	}
	o.events = nil
	return nil
}

// recordReportTx writes a reported change in the order's log, after the
// events of its version (seq), in tx. The order's row is locked, so no
// other report of the order takes the same seq.
func (s *Service) recordReportTx(ctx context.Context, tx *store.Tx, orderID string, e Event) error {
	_, err := s.q.OrderEventInsertReport(ctx, tx, OrderEventInsertReportParams{OrderID: orderID, Version: e.Version,
		Time: e.Time, Trigger: e.Trigger, Source: e.From, Target: e.To, ReportedBy: e.ReportedBy,
		Changes: store.JSON(e.Changes)})
	if err != nil {
		return fmt.Errorf("record a report on order %s: %w", orderID, err)
	}
	return nil
}

// eventCursorTime is the time of every event page token: events page by
// (version, seq), which the cursor's id carries as "version.seq".
var eventCursorTime = time.Unix(1, 0).UTC()

// eventCursor reads an event page token's id. A token of a version alone
// (written before reports were logged) resumes after all of that version.
func eventCursor(id string) (version, seq int64, err error) {
	v, sq, hasSeq := strings.Cut(id, ".")
	if version, err = strconv.ParseInt(v, 10, 64); err != nil {
		return 0, 0, store.ErrInvalidPageToken
	}
	if !hasSeq {
		return version, math.MaxInt32, nil
	}
	if seq, err = strconv.ParseInt(sq, 10, 32); err != nil {
		return 0, 0, store.ErrInvalidPageToken
	}
	return version, seq, nil
}

// Events lists an order's lifecycle log, oldest first. A missing order is
// [ErrOrderNotFound].
func (s *Service) Events(ctx context.Context, project, ref string, page store.PageRequest) (store.Page[Event], error) {
	o, err := s.Order(ctx, project, ref)
	if err != nil {
		return store.Page[Event]{}, err
	}
	size := page.Size
	if size == 0 {
		size = store.DefaultPageSize
	}
	var after, afterSeq int64 = 0, math.MaxInt32
	if _, id := page.Keyset(); id != "" {
		if after, afterSeq, err = eventCursor(id); err != nil {
			return store.Page[Event]{}, err
		}
	}
	rows, err := s.q.OrderEventList(ctx, s.cfg.DB, OrderEventListParams{OrderID: o.ID, MinVersion: after,
		Version: after, MinSeq: afterSeq, Limit: int64(size) + 1})
	if err != nil {
		return store.Page[Event]{}, fmt.Errorf("list events of %s: %w", o.ID, err)
	}
	events := make([]Event, 0, len(rows))
	for _, r := range rows {
		e := Event{Version: r.Version, seq: r.Seq, Time: r.Time, Trigger: r.Trigger, From: r.Source, To: r.Target,
			Operation: r.Operation, Error: r.Error, ReportedBy: r.ReportedBy, OperationID: r.OperationID,
			InstanceID: r.InstanceID, ProviderName: r.ProviderName, Message: r.Message}
		if len(r.Changes) > 0 {
			if err := json.Unmarshal(r.Changes, &e.Changes); err != nil {
				return store.Page[Event]{}, fmt.Errorf("list events of %s: %w", o.ID, err)
			}
		}
		events = append(events, e)
	}
	return store.NewPage(events, page, func(e Event) store.Cursor {
		return store.Cursor{Time: eventCursorTime, ID: strconv.FormatInt(e.Version, 10) + "." + strconv.FormatInt(e.seq, 10)}
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

// decodeValueSets reads the stored user value sets. An order stored before
// they were kept has none: each of its sets is taken to have been asked
// with the values it shows.
func (o *Order) decodeValueSets(raw json.RawMessage) error {
	if len(raw) > 0 && string(raw) != "null" {
		return json.Unmarshal(raw, &o.valueSets)
	}
	for _, s := range []struct {
		set    map[string]any
		values *[]catalog.UserValue
	}{{o.Attributes.Candidate, &o.valueSets.Candidate}, {o.Attributes.Active, &o.valueSets.Active},
		{o.Attributes.Rollback, &o.valueSets.Rollback}} {
		if s.set != nil {
			*s.values = o.UserValues
		}
	}
	return nil
}
