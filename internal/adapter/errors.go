package adapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound is returned by [Transport.Get] when the object does not exist
// (or its kind is not served, so it cannot exist).
var ErrNotFound = errors.New("not found")

// ErrTransient marks a failure that may go away on its own: the Kubernetes
// API or the Steward API unreachable, timing out, answering 5xx or 429.
// The executor never reports such a failure as the order's status (a report
// would flap Health for a network blip); it returns it in [Outcome.Retry] so
// that the caller redelivers the event later. Test it with errors.Is; make
// one with [Transient].
var ErrTransient = errors.New("transient")

// ErrUnhandledEvent is returned by [Executor.Execute] for an event whose type
// is not a reconcile event of one of the config's service types. The caller
// should acknowledge and drop it: this adapter has nothing to do with it.
var ErrUnhandledEvent = errors.New("event not handled by this adapter")

// ErrInvalidEvent is returned by [Executor.Execute] for a reconcile event
// whose data lacks the order id or a positive generation. Nothing can be
// reported for it (there is no order to report on), so the caller should
// log and drop it.
var ErrInvalidEvent = errors.New("invalid reconcile event")

// Transient wraps err so that errors.Is(err, [ErrTransient]) holds, keeping
// err's text and chain. A [Transport] or [API] implementation uses it for
// failures worth retrying. Transient(nil) is nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &transientError{err: err}
}

type transientError struct{ err error }

func (e *transientError) Error() string        { return e.err.Error() }
func (e *transientError) Unwrap() error        { return e.err }
func (e *transientError) Is(target error) bool { return target == ErrTransient }

// isTransient reports whether err is worth retrying. A cancelled or expired
// context counts: the work was interrupted, not refused.
func isTransient(err error) bool {
	return errors.Is(err, ErrTransient) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Problem is one thing wrong with a config: the field path, in the YAML's
// own names (resources[1].delete_options.after), and what is wrong there.
type Problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// ConfigError is returned by [Parse], [Load] and [NewExecutor] for a config
// that cannot run. It lists every problem found, not only the first, so an
// author fixes a config in one round.
type ConfigError struct {
	// File is the config's path when it was loaded by [Load], else empty.
	File     string
	Problems []Problem
}

// Error lists the problems, one per line after the first.
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("adapter config")
	if e.File != "" {
		b.WriteString(" " + e.File)
	}
	if len(e.Problems) == 1 {
		p := e.Problems[0]
		fmt.Fprintf(&b, ": %s: %s", p.Field, p.Message)
		return b.String()
	}
	fmt.Fprintf(&b, ": %d problems:", len(e.Problems))
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n\t%s: %s", p.Field, p.Message)
	}
	return b.String()
}

// problems collects a config's problems while it is checked.
type problems []Problem

func (ps *problems) add(field, format string, args ...any) {
	*ps = append(*ps, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (ps problems) err(file string) error {
	if len(ps) == 0 {
		return nil
	}
	return &ConfigError{File: file, Problems: ps}
}
