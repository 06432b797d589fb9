package events

import (
	"errors"
	"fmt"
)

var (
	// ErrNotStarted is returned by [Bus] methods called before [Bus.Start] or
	// after [Bus.Stop], and by [EmbeddedServer.InProcessConn] on a server that
	// is not running.
	ErrNotStarted = errors.New("events: not started")
	// ErrAlreadyStarted is returned by [EmbeddedServer.Start] on a server that
	// was started before: a NATS server runs once, so a restart needs a new
	// EmbeddedServer on the same store directory.
	ErrAlreadyStarted = errors.New("events: already started")
	// ErrDisconnected is returned by [Bus.Check] while the connection to NATS
	// is down (reconnecting or closed).
	ErrDisconnected = errors.New("events: disconnected from nats")
	// ErrInvalidSubject is returned for a NATS subject that is not a literal
	// subject under [SubjectRoot] ("steward.instance.created"), so it would
	// fall outside the stream and could never be stored.
	ErrInvalidSubject = errors.New("events: invalid subject")
	// ErrInvalidEvent is returned for an event that is not a valid
	// CloudEvent 1.0 (a missing id, source or type, or undecodable JSON).
	ErrInvalidEvent = errors.New("events: invalid event")
)

// NoJetStreamError is [Bus.Start]'s answer when the NATS server at URL
// runs without JetStream (nats-server without -js), which Steward's stream
// needs.
type NoJetStreamError struct {
	URL string // redacted of any credentials
}

func (e *NoJetStreamError) Error() string {
	return fmt.Sprintf("events: the NATS server at %s has no JetStream: start it with -js (nats-server -js)", e.URL)
}
