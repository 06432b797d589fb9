package provider

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// OperationExport is the entry of [Registration.Operations] that says a
// provider moves its instances' data: it implements [Exporter] (an old
// instance hands its data out) and fills a new instance from the
// [ExportSource] of a [CreateRequest]. Steward rehydrates an instance with
// its data only when the old instance's provider and the new one's both
// registered it; otherwise the new instance starts empty, as any create.
const OperationExport = "export"

// ExportSource, in a [CreateRequest], asks the provider to fill the new
// instance with the data of another before it reports it RUNNING: the new
// provider pulls it straight from the old one ([OpenExport]), so the data
// never passes through Steward. Create answers PROVISIONING while it copies,
// and the provider reports RUNNING once the data is in, or FAILED with why
// (Steward then deletes the new instance and the old one serves again).
type ExportSource struct {
	// Endpoint is the old instance's provider.
	Endpoint   string `json:"endpoint"`
	InstanceID string `json:"instance_id"`
	// Token lets its bearer read this one instance's export until it
	// expires (minutes). It is a secret: log none of it, and do not keep it.
	Token string `json:"token"`
}

// ExportGrant is the answer to POST
// {endpoint}/api/v1/services/{instance_id}/export:begin: the instance takes
// no more writes, and Token reads its export until ExpireTime.
type ExportGrant struct {
	InstanceID string    `json:"instance_id"`
	Token      string    `json:"token"`
	ExpireTime time.Time `json:"expire_time"`
}

// Exporter is implemented by a [Provider] whose instances hold data that a
// rehydration carries to their replacement; it registers with
// [OperationExport]. [NewServer] serves:
//
//   - POST /api/v1/services/{instance_id}/export:begin (Steward, with the
//     server's token): BeginExport, then 200 with an [ExportGrant].
//   - GET /api/v1/services/{instance_id}/export (the new instance's
//     provider, with the grant's token as "Authorization: Bearer"): 200
//     application/octet-stream with what Export writes. A failure after the
//     first byte cuts the connection, so the reader sees a truncated body,
//     never a short one that looks whole.
//   - POST /api/v1/services/{instance_id}/export:end (Steward): EndExport,
//     then 204.
//
// A server without a token serves none of them.
//
// BeginExport makes the instance refuse writes from now on (reads go on),
// so an export taken after it holds everything ever acknowledged; it is
// idempotent. Export writes the instance's data in the provider's own
// format, the one its Create reads from an ExportSource. EndExport lets the
// instance take writes again (the copy failed: the old instance serves on);
// it is idempotent, and a no-op for an instance not exporting. Each returns
// [ErrNotFound] for an instance the provider does not hold.
type Exporter interface {
	BeginExport(ctx context.Context, instanceID string) error
	Export(ctx context.Context, instanceID string, w io.Writer) error
	EndExport(ctx context.Context, instanceID string) error
}

// The export routes, after an instance's path.
const (
	exportSuffix      = "/export"
	exportBeginSuffix = "/export:begin"
	exportEndSuffix   = "/export:end"
)

// DefaultExportTTL is how long an [ExportGrant]'s token may start an
// export (a running one is not cut when it expires).
const DefaultExportTTL = 10 * time.Minute

// exportTokenPrefix marks export tokens, so a leaked one is recognisable.
const exportTokenPrefix = "stx_"

// exportTokens mints and checks export tokens: an expiry and an HMAC of the
// instance id and that expiry, so a token opens one instance's export, for
// a while, and the provider stores nothing.
type exportTokens struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

func newExportTokens(key []byte, ttl time.Duration) exportTokens {
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key) // never fails (crypto/rand)
	}
	if ttl <= 0 {
		ttl = DefaultExportTTL
	}
	return exportTokens{key: key, ttl: ttl, now: time.Now}
}

func (t exportTokens) mac(id string, expiry uint64) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte("steward-export\x00" + id + "\x00"))
	_ = binary.Write(m, binary.BigEndian, expiry)
	return m.Sum(nil)
}

func (t exportTokens) mint(id string) (string, time.Time) {
	exp := t.now().Add(t.ttl).Truncate(time.Second)
	b := binary.BigEndian.AppendUint64(nil, uint64(exp.Unix()))
	b = append(b, t.mac(id, uint64(exp.Unix()))...)
	return exportTokenPrefix + base64.RawURLEncoding.EncodeToString(b), exp.UTC()
}

// valid reports whether token opens instance id's export now.
func (t exportTokens) valid(id, token string) bool {
	raw, ok := strings.CutPrefix(token, exportTokenPrefix)
	if !ok {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || len(b) != 8+sha256.Size {
		return false
	}
	exp := binary.BigEndian.Uint64(b[:8])
	if subtle.ConstantTimeCompare(b[8:], t.mac(id, exp)) != 1 {
		return false
	}
	return t.now().Unix() < int64(exp)
}

func (s *server) beginExport(w http.ResponseWriter, r *http.Request, id string) {
	if err := s.exporter.BeginExport(r.Context(), id); err != nil {
		s.fail(w, r, err)
		return
	}
	token, exp := s.exportTokens.mint(id)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, ExportGrant{InstanceID: id, Token: token, ExpireTime: exp})
}

func (s *server) endExport(w http.ResponseWriter, r *http.Request, id string) {
	if err := s.exporter.EndExport(r.Context(), id); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// export streams an instance's export to the bearer of its grant's token.
func (s *server) export(w http.ResponseWriter, r *http.Request, id string) {
	got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !s.exportTokens.valid(id, got) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="provider-export"`)
		s.problem(w, r, http.StatusUnauthorized, "UNAUTHENTICATED", "a valid export token for this instance is required")
		return
	}
	sw := &startedWriter{w: w}
	err := s.exporter.Export(r.Context(), id, sw)
	switch {
	case err == nil && !sw.started:
		sw.start()
	case err != nil && !sw.started:
		s.fail(w, r, err)
	case err != nil:
		s.logger.ErrorContext(r.Context(), "export cut short", "instance_id", id, "error", err)
		panic(http.ErrAbortHandler) // the reader must see a broken stream, not an end
	}
}

// startedWriter sends the export's headers with its first byte, so an
// export that fails at once still answers a problem.
type startedWriter struct {
	w       http.ResponseWriter
	started bool
}

func (sw *startedWriter) start() {
	sw.started = true
	sw.w.Header().Set("Content-Type", "application/octet-stream")
	sw.w.Header().Set("Cache-Control", "no-store")
	sw.w.WriteHeader(http.StatusOK)
}

func (sw *startedWriter) Write(p []byte) (int, error) {
	if !sw.started {
		sw.start()
	}
	return sw.w.Write(p)
}

// BeginExport asks the provider at endpoint to stop writes to an instance
// and grant an export of it: POST {endpoint}/api/v1/services/{id}/export:begin.
// Call it with the provider's call token ([WithCallToken]). The grant's
// token is a secret. It returns an error wrapping [ErrNotFound] on a 404,
// and otherwise the errors of [Client].
func (c *Client) BeginExport(ctx context.Context, endpoint, id string) (ExportGrant, error) {
	var g ExportGrant
	err := c.instanceSubCall(ctx, endpoint, id, exportBeginSuffix, request{method: http.MethodPost, body: struct{}{}}, &g)
	if err == nil && (g.InstanceID != id || g.Token == "") {
		err = fmt.Errorf("%w: a grant for instance %q without a token, or for another", ErrInvalidResponse, g.InstanceID)
	}
	if err != nil {
		return ExportGrant{}, fmt.Errorf("begin the export of instance %q at %s: %w", id, endpoint, err)
	}
	return g, nil
}

// EndExport asks the provider at endpoint to let an instance take writes
// again: POST {endpoint}/api/v1/services/{id}/export:end. It returns an
// error wrapping [ErrNotFound] on a 404, and otherwise the errors of
// [Client].
func (c *Client) EndExport(ctx context.Context, endpoint, id string) error {
	err := c.instanceSubCall(ctx, endpoint, id, exportEndSuffix, request{method: http.MethodPost, body: struct{}{}}, nil)
	if err != nil {
		return fmt.Errorf("end the export of instance %q at %s: %w", id, endpoint, err)
	}
	return nil
}

// ErrExportRefused is returned by [OpenExport] when the old provider does
// not hand the export out (its answer is in the wrapped *ResponseError).
var ErrExportRefused = errors.New("provider: export refused")

// OpenExport opens the export src names, for a provider filling a new
// instance: GET {src.Endpoint}/api/v1/services/{src.InstanceID}/export with
// src.Token. hc defaults to http.DefaultClient; ctx bounds the whole read.
// The caller reads the body to its end and closes it; a body cut short ends
// in an error other than io.EOF.
func OpenExport(ctx context.Context, hc *http.Client, src ExportSource) (io.ReadCloser, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	u, err := joinURL(src.Endpoint, servicesPath+"/"+url.PathEscape(src.InstanceID)+exportSuffix)
	if err != nil {
		return nil, fmt.Errorf("export of instance %q: %w", src.InstanceID, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+src.Token)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("export of instance %q from %s: %w: %w", src.InstanceID, src.Endpoint, ErrUnreachable, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("export of instance %q from %s: %w: %w", src.InstanceID, src.Endpoint, ErrExportRefused,
			&ResponseError{StatusCode: resp.StatusCode, Body: body})
	}
	return resp.Body, nil
}
