package httpapi

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// RequestIDHeader carries the request id in and out; it is also the problem's
// `instance` and a key of every log line about the request.
const RequestIDHeader = "X-Request-Id"

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// requestInfo is filled as the request goes through the chain and read by
// the access log and the metrics when it ends.
type requestInfo struct {
	id     string
	client string // the client's address, as clientAddr resolves it
	start  time.Time
	route  string
	reason string
	span   trace.Span
	// pageKey signs the page tokens of the request's list (ParsePage).
	pageKey []byte
}

type infoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{id: "none"}
}

// RequestID returns the id of the request ctx belongs to ("" outside one).
func RequestID(ctx context.Context) string {
	if info, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return info.id
	}
	return ""
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// begin starts the request: its id (the client's, if well formed), its span
// and its info record.
func (a *API) begin(w http.ResponseWriter, r *http.Request) (*requestInfo, *http.Request) {
	info := &requestInfo{id: r.Header.Get(RequestIDHeader), client: a.clientAddr(r), start: time.Now(),
		pageKey: a.cfg.PageKey}
	if !requestIDPattern.MatchString(info.id) {
		info.id = newRequestID()
	}
	w.Header().Set(RequestIDHeader, info.id)
	ctx := context.WithValue(r.Context(), infoKey{}, info)
	if a.cfg.Tracer != nil {
		ctx = otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(r.Header))
		ctx, info.span = a.cfg.Tracer.Start(ctx, "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path),
				attribute.String("steward.request_id", info.id)))
	}
	return info, r.WithContext(ctx)
}

// end recovers a panic into a 500 problem, then logs, counts and closes the span.
func (a *API) end(rec *statusRecorder, r *http.Request, info *requestInfo) {
	if p := recover(); p != nil {
		if p == http.ErrAbortHandler {
			panic(p)
		}
		err := fmt.Errorf("panic: %v", p)
		if !rec.wroteHeader {
			a.WriteError(rec, r, err)
		} else {
			a.cfg.Logger.ErrorContext(r.Context(), "panic after response started", "error", err, "request_id", info.id)
		}
	}
	status := rec.status()
	elapsed := time.Since(info.start)
	route := cmp.Or(info.route, "unmatched")
	method, path, _ := strings.Cut(route, " ")
	if path == "" {
		method, path = r.Method, route
	}
	a.metrics.observe(method, path, status, elapsed)
	attrs := []any{"request_id", info.id, "client_address", info.client, "method", r.Method, "path", r.URL.Path, "route", path,
		"status", status, "duration_ms", float64(elapsed.Microseconds()) / 1000, "bytes", rec.bytes}
	if info.reason != "" {
		attrs = append(attrs, "reason", info.reason)
	}
	a.cfg.Logger.Log(r.Context(), a.cfg.RequestLogLevel, "request", attrs...)
	if info.span != nil {
		info.span.SetName(r.Method + " " + path)
		info.span.SetAttributes(attribute.Int("http.response.status_code", status), attribute.String("http.route", path))
		if status >= 500 {
			info.span.SetStatus(codes.Error, strconv.Itoa(status))
		}
		info.span.End()
	}
}

// statusRecorder remembers the status and size of the response.
type statusRecorder struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
	bytes       int
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wroteHeader {
		s.code, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wroteHeader {
		s.WriteHeader(http.StatusOK)
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

func (s *statusRecorder) status() int {
	if !s.wroteHeader {
		return http.StatusOK
	}
	return s.code
}

// Unwrap lets http.ResponseController reach the connection (flush, deadlines).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
