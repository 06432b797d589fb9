package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Publisher publishes a message on a NATS subject. A *nats.Conn from
// github.com/nats-io/nats.go satisfies it; this package does not import
// NATS, so a provider chooses its own client and version.
type Publisher interface {
	Publish(subject string, data []byte) error
}

// NATSReporter reports status as CloudEvents 1.0 in structured mode (the
// whole event as one JSON object) on the NATS subject
// [StatusSubject](service type), which Steward's stream captures. Set
// Publisher, Source, and ServiceType or ServiceTypeFunc. It is safe for
// concurrent use if its Publisher is, and its fields must not change once
// it is in use.
//
// NOTE: a core NATS publish is fire-and-forget: a nil error means the
// message was buffered, not stored. A provider that needs to know wraps a
// JetStream publish (which waits for the stream's ack) in a [Publisher].
type NATSReporter struct {
	// Publisher sends the events. Required.
	Publisher Publisher
	// Source is the CloudEvents source, a URI reference naming the
	// provider, such as "/providers/kubevirt-sp". Required.
	Source string
	// ServiceTypeFunc returns the service type of an instance, which names
	// the subject. When nil, ServiceType is used for every instance.
	ServiceTypeFunc func(instanceID string) string
	// ServiceType is the service type of every instance, when
	// ServiceTypeFunc is nil.
	ServiceType string
}

// statusEvent is the structured-mode CloudEvent NATSReporter publishes.
type statusEvent struct {
	SpecVersion     string       `json:"specversion"`
	ID              string       `json:"id"`
	Source          string       `json:"source"`
	Type            string       `json:"type"`
	Subject         string       `json:"subject"`
	Time            time.Time    `json:"time"`
	DataContentType string       `json:"datacontenttype"`
	Data            StatusReport `json:"data"`
}

// Report publishes r as an event with a new UUID id, type
// [StatusEventType], subject r.InstanceID, time r.ObservedTime (now when
// zero) and r, instance id included, as data. It does not retry; ctx is
// checked before publishing only, as [Publisher] takes none.
//
// It returns an error wrapping [ErrInvalidReport] when r has no instance id
// or an unknown status, or when no usable service type is known for it (a
// service type must be one NATS subject token); an error for a reporter
// without Publisher or Source; and the Publisher's error, wrapped.
func (n *NATSReporter) Report(ctx context.Context, r StatusReport) error {
	r, err := checkReport(r)
	if err != nil {
		return err
	}
	if n.Publisher == nil || n.Source == "" {
		return fmt.Errorf("report status of %q: NATSReporter needs a Publisher and a Source", r.InstanceID)
	}
	serviceType := n.ServiceType
	if n.ServiceTypeFunc != nil {
		serviceType = n.ServiceTypeFunc(r.InstanceID)
	}
	if serviceType == "" || strings.ContainsAny(serviceType, ".*> \t\r\n") {
		return fmt.Errorf("%w: service type %q of instance %q is not a subject token", ErrInvalidReport, serviceType, r.InstanceID)
	}
	ev := statusEvent{
		SpecVersion:     "1.0",
		ID:              uuid.NewString(),
		Source:          n.Source,
		Type:            StatusEventType,
		Subject:         r.InstanceID,
		Time:            r.ObservedTime,
		DataContentType: "application/json",
		Data:            r,
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("report status of %q: encode event: %w", r.InstanceID, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("report status of %q: %w", r.InstanceID, err)
	}
	subject := StatusSubject(serviceType)
	if err := n.Publisher.Publish(subject, b); err != nil {
		return fmt.Errorf("report status of %q: publish on %s: %w", r.InstanceID, subject, err)
	}
	return nil
}
