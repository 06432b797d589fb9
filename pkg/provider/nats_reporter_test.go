package provider_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/stewardhq/steward/pkg/provider"
)

// A *nats.Conn is a Publisher. Only this test imports NATS (and the
// CloudEvents SDK below): the package itself does not.
var _ provider.Publisher = (*nats.Conn)(nil)

type message struct {
	subject string
	data    []byte
}

type recordingPublisher struct {
	mu   sync.Mutex
	msgs []message
	err  error
}

func (p *recordingPublisher) Publish(subject string, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	p.msgs = append(p.msgs, message{subject: subject, data: data})
	return nil
}

func (p *recordingPublisher) published() []message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]message(nil), p.msgs...)
}

func TestNATSReporter_PublishesACloudEvent(t *testing.T) {
	t.Parallel()
	pub := &recordingPublisher{}
	r := &provider.NATSReporter{Publisher: pub, Source: "/providers/kubevirt-sp", ServiceType: "vm"}
	report := provider.StatusReport{InstanceID: "08aa-1", Status: provider.StatusRunning, Message: "booted", ObservedTime: observed}
	if err := r.Report(t.Context(), report); err != nil {
		t.Fatalf("Report: %v", err)
	}
	msgs := pub.published()
	if len(msgs) != 1 || msgs[0].subject != "steward.status.vm" {
		t.Fatalf("published %+v, want one message on steward.status.vm", msgs)
	}

	var env map[string]any
	if err := json.Unmarshal(msgs[0].data, &env); err != nil {
		t.Fatalf("decode envelope: %v", err)
	}
	id, _ := env["id"].(string)
	if _, err := uuid.Parse(id); err != nil {
		t.Errorf("id %q is not a UUID", id)
	}
	delete(env, "id")
	want := map[string]any{
		"specversion":     "1.0",
		"source":          "/providers/kubevirt-sp",
		"type":            provider.StatusEventType,
		"subject":         "08aa-1",
		"time":            "2026-03-01T12:30:00Z",
		"datacontenttype": "application/json",
		"data": map[string]any{
			"instance_id": "08aa-1", "status": "RUNNING", "message": "booted", "observed_time": "2026-03-01T12:30:00Z",
		},
	}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("envelope: -want +got:\n%s", diff)
	}

	// The CloudEvents SDK (what Steward's intake parses with) reads it.
	var ev cloudevent.Event
	if err := json.Unmarshal(msgs[0].data, &ev); err != nil {
		t.Fatalf("CloudEvents SDK: %v", err)
	}
	if err := ev.Validate(); err != nil {
		t.Errorf("CloudEvents SDK: invalid event: %v", err)
	}
	var data provider.StatusReport
	if err := ev.DataAs(&data); err != nil || !reflect.DeepEqual(data, report) {
		t.Errorf("event data = %+v, %v; want %+v", data, err, report)
	}
	if !ev.Time().Equal(observed) {
		t.Errorf("event time = %v, want the observed time %v", ev.Time(), observed)
	}
}

func TestNATSReporter_SubjectPerServiceType(t *testing.T) {
	t.Parallel()
	pub := &recordingPublisher{}
	r := &provider.NATSReporter{Publisher: pub, Source: "/providers/multi", ServiceType: "ignored",
		ServiceTypeFunc: func(id string) string { return map[string]string{"db-1": "database", "vm-1": "vm"}[id] }}
	for _, id := range []string{"db-1", "vm-1"} {
		if err := r.Report(t.Context(), provider.StatusReport{InstanceID: id, Status: provider.StatusRunning}); err != nil {
			t.Fatalf("Report %s: %v", id, err)
		}
	}
	msgs := pub.published()
	var subjects, ids []string
	for _, m := range msgs {
		subjects = append(subjects, m.subject)
		var env struct {
			ID   string    `json:"id"`
			Time time.Time `json:"time"`
		}
		if err := json.Unmarshal(m.data, &env); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, env.ID)
		if env.Time.IsZero() {
			t.Error("a report without observed time has no event time")
		}
	}
	if diff := cmp.Diff([]string{"steward.status.database", "steward.status.vm"}, subjects); diff != "" {
		t.Errorf("subjects: -want +got:\n%s", diff)
	}
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Errorf("event ids %v, want two distinct", ids)
	}

	// An instance whose service type is unknown, or not one subject token.
	for _, id := range []string{"unknown-1"} {
		err := r.Report(t.Context(), provider.StatusReport{InstanceID: id, Status: provider.StatusRunning})
		if !errors.Is(err, provider.ErrInvalidReport) {
			t.Errorf("%s: err = %v, want ErrInvalidReport", id, err)
		}
	}
	bad := &provider.NATSReporter{Publisher: pub, Source: "/providers/x", ServiceType: "vm.>"}
	if err := bad.Report(t.Context(), provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning}); !errors.Is(err, provider.ErrInvalidReport) {
		t.Errorf("service type with wildcards: err = %v, want ErrInvalidReport", err)
	}
}

func TestNATSReporter_Errors(t *testing.T) {
	t.Parallel()
	report := provider.StatusReport{InstanceID: "i-1", Status: provider.StatusRunning}
	errDown := errors.New("nats: connection closed")
	r := &provider.NATSReporter{Publisher: &recordingPublisher{err: errDown}, Source: "/providers/x", ServiceType: "vm"}
	if err := r.Report(t.Context(), report); !errors.Is(err, errDown) {
		t.Errorf("err = %v, want the publisher's error wrapped", err)
	}
	if err := (&provider.NATSReporter{ServiceType: "vm"}).Report(t.Context(), report); err == nil {
		t.Error("a reporter without Publisher and Source reported")
	}
}
