// Package logtest captures a logger's lines for tests, as JSON records to
// assert on; production code never imports it (internal/server's import
// test enforces that).
package logtest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
)

// Buffer holds the JSON log lines written to it. It is safe for concurrent
// use, so a test may read it while the code under test logs.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Logger returns a JSON logger into b at level.
func (b *Buffer) Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: level}))
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Reset forgets the lines so far.
func (b *Buffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

// String is what was written so far, as it was written.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines decodes the lines so far; one that is not a JSON object fails tb.
func (b *Buffer) Lines(tb testing.TB) []Line {
	tb.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Line
	for line := range bytes.Lines(b.buf.Bytes()) {
		var l Line
		if err := json.Unmarshal(line, &l); err != nil {
			tb.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, l)
	}
	return out
}

// Matching is the lines so far whose msg is msg.
func (b *Buffer) Matching(tb testing.TB, msg string) []Line {
	tb.Helper()
	var out []Line
	for _, l := range b.Lines(tb) {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// Line is one decoded log line: "level", "msg" and the attributes.
type Line map[string]any

// Level is the line's level ("INFO", "DEBUG", …).
func (l Line) Level() string {
	s, _ := l["level"].(string)
	return s
}
