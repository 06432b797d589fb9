package events

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
)

// NoticeRoot is the first token of the subjects of notices: hints that
// something changed, sent to whoever listens now and kept nowhere (the
// stream holds only SubjectRoot's subjects). A notice may be lost; what
// it announces is always read again from the store.
const NoticeRoot = "steward_notice"

// Notify sends data on subject to the replicas listening now, without
// waiting or storing it (core NATS). subject must be under NoticeRoot.
func (b *Bus) Notify(subject string, data []byte) error {
	if !strings.HasPrefix(subject, NoticeRoot+".") {
		return fmt.Errorf("%w: notice subject %q is not under %q", ErrInvalidSubject, subject, NoticeRoot+".")
	}
	nc, _, err := b.conn()
	if err != nil {
		return err
	}
	return nc.Publish(subject, data)
}

// Listen calls f with each notice sent on subject (under NoticeRoot), one
// at a time, until stop is called or the Bus stops. f must be quick: it
// runs on the connection's delivery goroutine for the subscription.
func (b *Bus) Listen(subject string, f func(data []byte)) (stop func(), err error) {
	if !strings.HasPrefix(subject, NoticeRoot+".") {
		return nil, fmt.Errorf("%w: notice subject %q is not under %q", ErrInvalidSubject, subject, NoticeRoot+".")
	}
	nc, _, err := b.conn()
	if err != nil {
		return nil, err
	}
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) { f(m.Data) })
	if err != nil {
		return nil, fmt.Errorf("events: listen on %s: %w", subject, err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}
