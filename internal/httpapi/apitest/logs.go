package apitest

import (
	"bytes"
	"log/slog"
	"sync"

	"github.com/stewardhq/steward/internal/server"
)

// Logs is a server's log in JSON lines, safe to read while it writes.
type Logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// CaptureLogs returns a config adjustment that sends the server's log to l.
func (l *Logs) CaptureLogs(c *server.Config) { c.Logger = slog.New(slog.NewJSONHandler(l, nil)) }

// Write appends p.
func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns the log so far.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
