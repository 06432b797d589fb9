package jobs

import (
	"context"
	"log/slog"
)

// riverHandler is the handler River logs through: its info lines are
// routine ("Producer job counts" every 5 seconds, a maintenance service's
// every run) and go to debug, while its warnings and errors keep their
// level.
type riverHandler struct{ slog.Handler }

func (h riverHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.Handler.Enabled(ctx, riverLevel(level))
}

func (h riverHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = riverLevel(r.Level)
	return h.Handler.Handle(ctx, r)
}

func (h riverHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return riverHandler{h.Handler.WithAttrs(attrs)}
}

func (h riverHandler) WithGroup(name string) slog.Handler {
	return riverHandler{h.Handler.WithGroup(name)}
}

// riverLevel is the level a River line is logged at: below warn, debug.
func riverLevel(level slog.Level) slog.Level {
	if level >= slog.LevelWarn {
		return level
	}
	return min(level, slog.LevelDebug)
}
