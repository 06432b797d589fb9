package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/uuid"
)

// ContentType is the media type of an event on the wire: a CloudEvent 1.0 in
// structured mode, the whole event (attributes and data) as one JSON object.
const ContentType = "application/cloudevents+json"

// dataContentType is the type of every event's data: Steward's payloads are JSON.
const dataContentType = "application/json"

// SubjectRoot is the first token of every subject Steward publishes on. The
// stream captures "steward.>", so a subject outside it could never be stored.
const SubjectRoot = "steward"

// Event is a CloudEvent 1.0 whose data is JSON. It wraps the CloudEvents SDK
// type so that only this package depends on the SDK.
//
// Build one with [NewEvent]. The zero value is not a valid event. An Event is
// a value: the With methods return a changed copy, so it is safe to share
// between goroutines.
type Event struct {
	ce cloudevent.Event
}

// NewEvent returns an event with a new random (UUID v4) id, the time now in
// UTC, the given source (a URI reference such as "/steward/sprm") and type
// (reverse-DNS, such as "dev.steward.instance.created"), and data encoded
// with encoding/json (a json.RawMessage is used as is; nil means no data).
// It returns an error wrapping [ErrInvalidEvent] when the result is not a
// valid CloudEvent.
func NewEvent(source, eventType string, data any) (Event, error) {
	ce := cloudevent.New(cloudevent.CloudEventsVersionV1)
	ce.SetID(uuid.NewString())
	ce.SetSource(source)
	ce.SetType(eventType)
	// Microseconds, as the store keeps times, so an event and the row that
	// caused it carry the same instant.
	ce.SetTime(time.Now().UTC().Truncate(time.Microsecond))
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return Event{}, fmt.Errorf("%w: encode data: %v", ErrInvalidEvent, err)
		}
		// Set the bytes directly: the SDK's SetData would base64 a []byte.
		ce.SetDataContentType(dataContentType)
		ce.DataEncoded = b
	}
	ev := Event{ce: ce}
	if err := ev.Validate(); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// ParseEvent decodes a structured-mode CloudEvent (what [Event.MarshalJSON]
// writes). It returns an error wrapping [ErrInvalidEvent] for anything else.
func ParseEvent(b []byte) (Event, error) {
	var ev Event
	if err := ev.UnmarshalJSON(b); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// Validate reports, wrapping [ErrInvalidEvent], whether the event breaks the
// CloudEvents 1.0 rules (required id, source, specversion and type).
func (e Event) Validate() error {
	if e.ce.Context == nil {
		return fmt.Errorf("%w: empty event", ErrInvalidEvent)
	}
	if e.ce.SpecVersion() != cloudevent.CloudEventsVersionV1 {
		return fmt.Errorf("%w: specversion %q, want %q", ErrInvalidEvent, e.ce.SpecVersion(), cloudevent.CloudEventsVersionV1)
	}
	if err := e.ce.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	return nil
}

// WithSubject returns a copy of the event whose CloudEvents subject attribute
// (the resource the event is about, such as an instance id) is s. It is not
// the NATS subject the event is published on.
func (e Event) WithSubject(s string) Event {
	c := e.clone()
	c.ce.SetSubject(s)
	return c
}

// ID returns the event id, unique per source; consumers dedupe on it.
func (e Event) ID() string {
	if e.ce.Context == nil {
		return ""
	}
	return e.ce.ID()
}

// Source returns the event source.
func (e Event) Source() string {
	if e.ce.Context == nil {
		return ""
	}
	return e.ce.Source()
}

// Type returns the event type.
func (e Event) Type() string {
	if e.ce.Context == nil {
		return ""
	}
	return e.ce.Type()
}

// Subject returns the CloudEvents subject attribute ("" when unset).
func (e Event) Subject() string {
	if e.ce.Context == nil {
		return ""
	}
	return e.ce.Subject()
}

// Time returns when the event happened, in UTC (zero when unset).
func (e Event) Time() time.Time {
	if e.ce.Context == nil {
		return time.Time{}
	}
	return e.ce.Time().UTC()
}

// Data returns the event's JSON data (nil when it has none). The caller must
// not modify it.
func (e Event) Data() json.RawMessage { return e.ce.Data() }

// DataAs decodes the event's JSON data into v, as json.Unmarshal does. An
// event without data gives an error.
func (e Event) DataAs(v any) error {
	if err := json.Unmarshal(e.ce.Data(), v); err != nil {
		return fmt.Errorf("events: decode data of event %s: %w", e.ID(), err)
	}
	return nil
}

// MarshalJSON writes the event in CloudEvents structured JSON.
func (e Event) MarshalJSON() ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e.ce.MarshalJSON()
}

// UnmarshalJSON reads an event in CloudEvents structured JSON and validates it.
func (e *Event) UnmarshalJSON(b []byte) error {
	var ce cloudevent.Event
	if err := ce.UnmarshalJSON(b); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	ev := Event{ce: ce}
	if err := ev.Validate(); err != nil {
		return err
	}
	*e = ev
	return nil
}

// String returns a short description for logs and test failures.
func (e Event) String() string {
	return fmt.Sprintf("event %s (type %s, source %s)", e.ID(), e.Type(), e.Source())
}

func (e Event) clone() Event {
	if e.ce.Context == nil {
		return e
	}
	return Event{ce: e.ce.Clone()}
}

// checkSubject accepts a literal NATS subject under SubjectRoot: at least two
// non-empty tokens, no wildcards and no whitespace.
func checkSubject(subject string) error {
	tokens := strings.Split(subject, ".")
	if len(tokens) < 2 || tokens[0] != SubjectRoot {
		return fmt.Errorf("%w: %q is not under %q", ErrInvalidSubject, subject, SubjectRoot+".")
	}
	for _, t := range tokens {
		if t == "" || t == "*" || t == ">" || strings.ContainsAny(t, " \t\r\n") {
			return fmt.Errorf("%w: %q is not a literal subject", ErrInvalidSubject, subject)
		}
	}
	return nil
}
