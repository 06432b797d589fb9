package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/stewardhq/steward/internal/ctl"
)

// logFlags are the --log-level and --log-format of a long-running command.
type logFlags struct{ level, format string }

func (l *logFlags) register(f *pflag.FlagSet) {
	f.StringVar(&l.level, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(&l.format, "log-format", "auto", "log format: text, json, or auto (text when stderr is a terminal, JSON otherwise)")
}

// logger is the logger the flags ask for, writing to w (the command's
// stderr).
func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.level)); err != nil {
		return nil, &ctl.UsageError{Msg: fmt.Sprintf("--log-level: %v", err)}
	}
	opts := &slog.HandlerOptions{Level: level}
	switch l.format {
	case "json":
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "auto":
		if isTerminal(w) {
			return slog.New(slog.NewTextHandler(w, opts)), nil
		}
	default:
		return nil, &ctl.UsageError{Msg: fmt.Sprintf("--log-format: %q is none of text, json and auto", l.format)}
	}
	return slog.New(slog.NewJSONHandler(w, opts)), nil
}

// isTerminal says whether w is a terminal, where a person reads the log.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
