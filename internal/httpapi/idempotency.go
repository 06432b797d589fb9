package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/store"
)

// IdempotencyKeyHeader is the request header of API.md's Conventions.
const IdempotencyKeyHeader = "Idempotency-Key"

// replayedHeader marks an answer that was replayed from the record.
const replayedHeader = "Idempotent-Replayed"

// replayHeaders are the response headers a replay repeats.
var replayHeaders = []string{"Content-Type", "Location", "ETag"}

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

// IdempotencyConfig configures an [IdempotencyStore].
type IdempotencyConfig struct {
	DB     *store.DB
	Logger *slog.Logger
	// Retention is how long a key's answer is kept. Defaults to 24h, the
	// minimum API.md promises.
	Retention time.Duration
	// LockTimeout is how long a first request may stay in flight before its
	// key counts as abandoned (its process died) and a retry may run it
	// again. It must exceed the longest request. Defaults to 2m.
	LockTimeout time.Duration
	// Now reads the clock. Defaults to time.Now.
	Now func() time.Time
	// Holder names this process (its peers id): a key whose first request
	// it serves is released as soon as the process is known dead
	// ([IdempotencyStore.ReapTx]), not after LockTimeout.
	Holder string
}

// IdempotencyStore records POST answers by (principal, Idempotency-Key):
// a replay gets the first answer whatever its status, the same key with
// another request gets 422 IDEMPOTENCY_KEY_REUSED, and a key whose first
// request is still running gets 409 IDEMPOTENCY_KEY_IN_USE.
//
// The answer is recorded before the client sees it, so an acknowledged
// request is always replayable. If the process dies after a handler committed
// but before the answer was recorded, the key is released as soon as a peer
// sees the process dead (ReapTx), and a retry runs the handler again:
// handlers that create find the first run's work by [RequestKey] (or the
// client's ?id=), so that the second run answers what the first did.
type IdempotencyStore struct {
	cfg IdempotencyConfig
	q   *queries
}

// NewIdempotencyStore returns a store over cfg.DB.
func NewIdempotencyStore(cfg IdempotencyConfig) *IdempotencyStore {
	cfg.Retention = cmp.Or(cfg.Retention, 24*time.Hour)
	cfg.LockTimeout = cmp.Or(cfg.LockTimeout, 2*time.Minute)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &IdempotencyStore{cfg: cfg, q: newQueries(cfg.DB.Engine())}
}

// Prune deletes the records past their retention. It runs as a periodic job.
func (s *IdempotencyStore) Prune(ctx context.Context) (int64, error) {
	now := s.cfg.Now()
	n, err := s.q.IdempotencyKeyPrune(ctx, s.cfg.DB, now)
	if err != nil {
		return 0, fmt.Errorf("prune idempotency keys: %w", err)
	}
	return n, nil
}

// DB is the store the records are kept in.
func (s *IdempotencyStore) DB() *store.DB { return s.cfg.DB }

// ReapTx releases the keys whose first request a dead process was serving,
// in the reaping transaction (a peers.Reaper).
func (s *IdempotencyStore) ReapTx(ctx context.Context, tx *store.Tx, dead []string) error {
	if _, err := s.q.IdempotencyKeyReleaseOfDead(ctx, tx, dead); err != nil {
		return fmt.Errorf("release the idempotency keys of %v: %w", dead, err)
	}
	return nil
}

type recordedResponse struct {
	status int
	header map[string]string
	body   []byte
}

// serve runs h at most once per key, or replays its answer.
func (s *IdempotencyStore) serve(w http.ResponseWriter, r *http.Request, a *API, h HandlerFunc) {
	key := r.Header.Get(IdempotencyKeyHeader)
	if len(key) > 255 {
		a.WriteError(w, r, invalid.New(IdempotencyKeyHeader, "must be at most 255 characters"))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		a.WriteError(w, r, decodeError(err))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	principal := keyOwner(r)
	hash := requestHash(r, body)

	claimed, prior, err := s.claim(r.Context(), principal, key, r, hash)
	switch {
	case err != nil:
		a.WriteError(w, r, err)
		return
	case !claimed:
		replay(w, prior)
		return
	}

	buf := newBufferedResponse()
	if err := s.run(buf, r, h); err != nil {
		a.WriteError(buf, r, err)
	}
	// Record first, answer second: the client never holds an answer that a
	// replay could not give again.
	if err := s.complete(r.Context(), principal, key, buf); err != nil {
		a.cfg.Logger.ErrorContext(r.Context(), "record idempotent answer", "error", err, "request_id", RequestID(r.Context()))
		s.release(r.Context(), principal, key)
	}
	buf.copyTo(w)
}

// run calls h, releasing the key if h panics so that a retry is not blocked
// until LockTimeout.
func (s *IdempotencyStore) run(w http.ResponseWriter, r *http.Request, h HandlerFunc) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.release(r.Context(), keyOwner(r), r.Header.Get(IdempotencyKeyHeader))
			panic(p)
		}
	}()
	return h(w, r)
}

// claim takes the key for this request, or returns the recorded answer.
func (s *IdempotencyStore) claim(ctx context.Context, principal, key string, r *http.Request, hash string) (bool, *recordedResponse, error) {
	now := s.cfg.Now()
	lock, expires := now.Add(s.cfg.LockTimeout), now.Add(s.cfg.Retention)
	n, err := s.q.IdempotencyKeyInsert(ctx, s.cfg.DB, IdempotencyKeyInsertParams{Principal: principal, Key: key,
		Method: r.Method, Path: r.URL.Path, RequestHash: hash, CreatedAt: now, LockedUntil: lock, ExpiresAt: expires,
		Holder: s.cfg.Holder})
	if err != nil {
		return false, nil, fmt.Errorf("claim idempotency key: %w", err)
	}
	if n == 1 {
		return true, nil, nil
	}
	n, err = s.q.IdempotencyKeyTakeOver(ctx, s.cfg.DB, IdempotencyKeyTakeOverParams{Method: r.Method, Path: r.URL.Path,
		RequestHash: hash, Now: now, LockedUntil: lock, ExpiresAt: expires, Holder: s.cfg.Holder, Principal: principal,
		Key: key})
	if err != nil {
		return false, nil, fmt.Errorf("take over idempotency key: %w", err)
	}
	if n == 1 {
		return true, nil, nil
	}
	stored, err := s.q.IdempotencyKeyGet(ctx, s.cfg.DB, principal, key)
	if errors.Is(err, store.ErrNotFound) {
		// Pruned between our two statements: the first request is long gone.
		return false, nil, ErrIdempotencyKeyInUse
	}
	if err != nil {
		return false, nil, fmt.Errorf("read idempotency key: %w", err)
	}
	if stored.RequestHash != hash {
		return false, nil, ErrIdempotencyKeyReused
	}
	if stored.StatusCode == nil {
		return false, nil, ErrIdempotencyKeyInUse
	}
	rec := &recordedResponse{status: int(*stored.StatusCode), body: stored.ResponseBody}
	if err := json.Unmarshal(stored.ResponseHeader, &rec.header); err != nil {
		return false, nil, fmt.Errorf("read idempotency key headers: %w", err)
	}
	return false, rec, nil
}

func (s *IdempotencyStore) complete(ctx context.Context, principal, key string, buf *bufferedResponse) error {
	header := map[string]string{}
	for _, h := range replayHeaders {
		if v := buf.header.Get(h); v != "" {
			header[h] = v
		}
	}
	hb, _ := json.Marshal(header)
	// The answer must be recorded even if the client went away meanwhile.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	status := int64(buf.status)
	body := buf.body.Bytes()
	if buf.replayBody != nil {
		body = buf.replayBody
	}
	_, err := s.q.IdempotencyKeyComplete(ctx, s.cfg.DB, IdempotencyKeyCompleteParams{StatusCode: &status,
		ResponseHeader: json.RawMessage(hb), ResponseBody: body, Principal: principal, Key: key})
	return err
}

func (s *IdempotencyStore) release(ctx context.Context, principal, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := s.q.IdempotencyKeyRelease(ctx, s.cfg.DB, principal, key); err != nil {
		s.cfg.Logger.WarnContext(ctx, "release idempotency key", "error", err)
	}
}

// RequestKey identifies the request an Idempotency-Key names, for the
// principal making it; "" without a key. A handler that creates stores it
// with what it creates, in the same transaction, and looks it up first: a
// request run again because its first run's process died (the key was
// released before its answer was recorded) then answers with what the first
// run created instead of creating it twice.
func RequestKey(r *http.Request) string {
	key := r.Header.Get(IdempotencyKeyHeader)
	if key == "" {
		return ""
	}
	h := sha256.Sum256([]byte(keyOwner(r) + "\x00" + key))
	return hex.EncodeToString(h[:16])
}

// keyOwner is whose an Idempotency-Key is: the principal, named uniquely
// (its token, not its name, which another token may share), in the project
// the request acts in. A key never answers another principal's request,
// nor the same principal's in another project.
func keyOwner(r *http.Request) string {
	owner := "anonymous"
	if p, ok := auth.PrincipalFrom(r.Context()); ok {
		owner = p.Key()
	}
	return owner + "@" + auth.ProjectFrom(r.Context())
}

func requestHash(r *http.Request, body []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", r.Method, r.URL.Path, r.URL.RawQuery)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func replay(w http.ResponseWriter, rec *recordedResponse) {
	for k, v := range rec.header {
		w.Header().Set(k, v)
	}
	w.Header().Set(replayedHeader, "true")
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body)
}

// bufferedResponse holds a handler's answer until it has been recorded.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
	// replayBody, when set (ReplayAs), is recorded for replays instead of
	// body.
	replayBody []byte
}

// ReplayAs makes a replay of this request's answer (the same
// Idempotency-Key again) answer v instead of the body the first request
// got: for an answer that holds a secret, which must never rest in an
// idempotency record (a token's). It does nothing for a request without a
// key. Call it before writing the answer.
func ReplayAs(w http.ResponseWriter, v any) error {
	buf, ok := w.(*bufferedResponse)
	if !ok {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode the answer a replay gets: %w", err)
	}
	buf.replayBody = append(b, '\n')
	return nil
}

func newBufferedResponse() *bufferedResponse {
	return &bufferedResponse{header: http.Header{}}
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedResponse) copyTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.WriteHeader(cmp.Or(b.status, http.StatusOK))
	_, _ = w.Write(b.body.Bytes())
}
