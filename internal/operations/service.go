package operations

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// Config configures the Service. DB is required.
type Config struct {
	DB *store.DB
	// ErrorBody renders a failed operation's error as the problem object
	// stored in `error`. internal/server passes the problem table's renderer.
	// Defaults to {"detail": err.Error()}. A problem without an `instance`
	// (or with an empty one) gets the operation's, [InstanceURN].
	ErrorBody func(error) json.RawMessage
	// Now reads the clock. Defaults to time.Now.
	Now func() time.Time
}

// Service manages operations. It is safe for concurrent use.
type Service struct {
	cfg Config
	q   *queries
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.DB == nil {
		panic("operations: Config.DB is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ErrorBody == nil {
		cfg.ErrorBody = func(err error) json.RawMessage {
			b, _ := json.Marshal(map[string]string{"detail": err.Error()})
			return b
		}
	}
	return &Service{cfg: cfg, q: newQueries(cfg.DB.Engine())}
}

// StartParams describes the work an operation follows.
type StartParams struct {
	Project string
	Kind    string
	Target  string
	// Metadata is kind-specific; kind and target are added to it.
	Metadata map[string]any
	// RequestKey identifies the request that started it
	// (httpapi.RequestKey), for [Service.ByRequestKey].
	RequestKey string
}

// StartTx records a running operation in the caller's transaction.
func (s *Service) StartTx(ctx context.Context, tx *store.Tx, p StartParams) (Operation, error) {
	now := s.cfg.Now().UTC().Truncate(time.Microsecond)
	op := Operation{
		ID: store.NewID(), Project: p.Project, Kind: p.Kind, Target: p.Target,
		Metadata: map[string]any{}, CreateTime: now, UpdateTime: now,
	}
	maps.Copy(op.Metadata, p.Metadata)
	op.Metadata["kind"], op.Metadata["target"] = p.Kind, p.Target
	meta, err := json.Marshal(op.Metadata)
	if err != nil {
		return Operation{}, fmt.Errorf("encode operation metadata: %w", err)
	}
	if _, err := s.q.OperationInsert(ctx, tx, OperationInsertParams{ID: op.ID, Project: op.Project, Kind: op.Kind,
		Target: op.Target, Metadata: json.RawMessage(meta), CreateTime: now, UpdateTime: now, RequestKey: p.RequestKey}); err != nil {
		return Operation{}, fmt.Errorf("insert operation: %w", err)
	}
	return op, nil
}

// FinishParams is the outcome of an operation: Err for a failure, else Response.
type FinishParams struct {
	Response any
	Err      error
	// Metadata entries replace or add to the operation's metadata.
	Metadata map[string]any
}

// FinishTx marks the operation done in the caller's transaction. It returns
// ErrNotFound or ErrAlreadyDone; finishing is not repeated.
func (s *Service) FinishTx(ctx context.Context, tx *store.Tx, id string, p FinishParams) (Operation, error) {
	op, err := fromRow(s.q.OperationGetByID(ctx, tx, id))
	if err != nil {
		return Operation{}, err
	}
	if op.Done {
		return Operation{}, ErrAlreadyDone
	}
	maps.Copy(op.Metadata, p.Metadata)
	op.Done, op.UpdateTime = true, s.cfg.Now().UTC().Truncate(time.Microsecond)
	if p.Err != nil {
		op.Error = withInstance(s.cfg.ErrorBody(p.Err), InstanceURN(op.ID))
	} else if p.Response != nil {
		if op.Response, err = json.Marshal(p.Response); err != nil {
			return Operation{}, fmt.Errorf("encode operation response: %w", err)
		}
	}
	meta, err := json.Marshal(op.Metadata)
	if err != nil {
		return Operation{}, fmt.Errorf("encode operation metadata: %w", err)
	}
	n, err := s.q.OperationFinish(ctx, tx, OperationFinishParams{Response: op.Response, Error: op.Error,
		Metadata: json.RawMessage(meta), UpdateTime: op.UpdateTime, ID: id})
	if err != nil {
		return Operation{}, fmt.Errorf("finish operation: %w", err)
	}
	if n == 0 {
		return Operation{}, ErrAlreadyDone
	}
	return op, nil
}

// Get returns the operation id of project, or ErrNotFound.
func (s *Service) Get(ctx context.Context, project, id string) (Operation, error) {
	return fromRow(s.q.OperationGet(ctx, s.cfg.DB, project, id))
}

// ByRequestKey returns the operation of project that the request key
// started, or ErrNotFound: a request run again after its process died
// answers with the operation its first run started.
func (s *Service) ByRequestKey(ctx context.Context, project, key string) (Operation, error) {
	if key == "" {
		return Operation{}, ErrNotFound
	}
	row, err := s.q.OperationGetByRequestKey(ctx, s.cfg.DB, project, key)
	return fromRow(OperationGetRow(row), err)
}

// ListParams filters and pages a list of operations.
type ListParams struct {
	Project string
	// Kind, when set, keeps only operations of that kind.
	Kind string
	// Target, when set, keeps only operations on that resource (its path,
	// "catalog-item-instances/web").
	Target string
	// Done, when set, keeps only finished (true) or running (false) ones.
	Done *bool
	Page store.PageRequest
}

// List returns one page of the project's operations, oldest first.
func (s *Service) List(ctx context.Context, p ListParams) (store.Page[Operation], error) {
	size := cmp.Or(p.Page.Size, store.DefaultPageSize)
	afterTime, afterID := p.Page.Keyset()
	rows, err := s.q.OperationList(ctx, s.cfg.DB, OperationListParams{Project: p.Project, Kind: p.Kind, Target: p.Target, Done: p.Done,
		AfterTime: afterTime, AfterID: afterID, Limit: int64(size + 1)})
	if err != nil {
		return store.Page[Operation]{}, fmt.Errorf("list operations: %w", err)
	}
	ops := make([]Operation, 0, len(rows))
	for _, row := range rows {
		op, err := fromRow(OperationGetRow(row), nil)
		if err != nil {
			return store.Page[Operation]{}, err
		}
		ops = append(ops, op)
	}
	return store.NewPage(ops, p.Page, func(o Operation) store.Cursor {
		return store.Cursor{Time: o.CreateTime, ID: o.ID}
	}), nil
}

// fromRow makes an Operation of a row read by OperationGet (or a query
// returning the same columns); no row is ErrNotFound.
func fromRow[R OperationGetRow | OperationGetByIDRow](r R, err error) (Operation, error) {
	if errors.Is(err, store.ErrNotFound) {
		return Operation{}, ErrNotFound
	}
	if err != nil {
		return Operation{}, fmt.Errorf("read operation: %w", err)
	}
	row := OperationGetRow(r)
	op := Operation{ID: row.ID, Project: row.Project, Kind: row.Kind, Target: row.Target, Done: row.Done,
		Response: row.Response, Error: row.Error, CreateTime: row.CreateTime, UpdateTime: row.UpdateTime}
	if err := json.Unmarshal(row.Metadata, &op.Metadata); err != nil {
		return Operation{}, fmt.Errorf("read operation metadata: %w", err)
	}
	if len(op.Error) > 0 {
		op.Error = withInstance(op.Error, InstanceURN(op.ID))
	}
	return op, nil
}

// InstanceURN is the `instance` of a failed operation's problem: the
// operation it is the outcome of, as a request's problem names the request
// (urn:steward:request:<id>).
func InstanceURN(operationID string) string { return "urn:steward:operation:" + operationID }

// withInstance sets the problem's `instance` to instance when it has none
// or an empty one. A body that is not a JSON object is kept as it is.
func withInstance(problem json.RawMessage, instance string) json.RawMessage {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(problem, &members); err != nil || members == nil {
		return problem
	}
	var have string
	if raw, ok := members["instance"]; ok && json.Unmarshal(raw, &have) == nil && have != "" {
		return problem
	}
	members["instance"], _ = json.Marshal(instance) // a string always encodes
	b, err := json.Marshal(members)
	if err != nil {
		return problem
	}
	return b
}
