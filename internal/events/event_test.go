package events

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestNewEvent_IsAValidStructuredCloudEvent(t *testing.T) {
	t.Parallel()
	before := time.Now().UTC().Add(-time.Second)
	ev, err := NewEvent("/steward/sprm", "dev.steward.instance.created", map[string]any{"instance_id": "i-1"})
	if err != nil {
		t.Fatalf("NewEvent: %v", err)
	}
	ev = ev.WithSubject("i-1")
	if ev.ID() == "" || ev.Source() != "/steward/sprm" || ev.Type() != "dev.steward.instance.created" || ev.Subject() != "i-1" {
		t.Errorf("attributes = %s subject %q", ev, ev.Subject())
	}
	if ev.Time().Location() != time.UTC || ev.Time().Before(before) {
		t.Errorf("time = %v, want now in UTC", ev.Time())
	}

	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var wire map[string]any
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatalf("wire form is not JSON: %v", err)
	}
	for key, want := range map[string]any{
		"specversion":     "1.0",
		"datacontenttype": "application/json",
		"source":          "/steward/sprm",
		"subject":         "i-1",
	} {
		if wire[key] != want {
			t.Errorf("wire %s = %v, want %v (event %s)", key, wire[key], want, b)
		}
	}
	if data, ok := wire["data"].(map[string]any); !ok || data["instance_id"] != "i-1" {
		t.Errorf("wire data = %v, want the JSON object (not base64); event %s", wire["data"], b)
	}

	got, err := ParseEvent(b)
	if err != nil {
		t.Fatalf("ParseEvent: %v", err)
	}
	var data struct {
		InstanceID string `json:"instance_id"`
	}
	if err := got.DataAs(&data); err != nil || data.InstanceID != "i-1" {
		t.Errorf("DataAs = %+v, %v", data, err)
	}
	if got.ID() != ev.ID() || !got.Time().Equal(ev.Time()) || got.Subject() != "i-1" {
		t.Errorf("round trip = %s at %v, want %s at %v", got, got.Time(), ev, ev.Time())
	}
}

func TestEvent_WithSubjectLeavesTheOriginal(t *testing.T) {
	t.Parallel()
	ev := newEvent(t, "dev.steward.test", nil)
	_ = ev.WithSubject("x")
	if ev.Subject() != "" {
		t.Errorf("original subject = %q, want unchanged", ev.Subject())
	}
	if ev.Data() != nil {
		t.Errorf("nil data gave %s", ev.Data())
	}
}

func TestNewEvent_RejectsInvalid(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		source, eventType string
		data              any
		reason            string
	}{
		"no source":        {"", "dev.steward.x", nil, "source is required"},
		"no type":          {"/steward", "", nil, "type is required"},
		"unencodable data": {"/steward", "dev.steward.x", make(chan int), "data must encode as JSON"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := NewEvent(tc.source, tc.eventType, tc.data); !errors.Is(err, ErrInvalidEvent) {
				t.Errorf("err = %v, want ErrInvalidEvent: %s", err, tc.reason)
			}
		})
	}
}

func TestParseEvent_RejectsInvalid(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		in     string
		reason string
	}{
		"not json":     {`{`, "garbage"},
		"empty object": {`{}`, "no attributes at all"},
		"no id":        {`{"specversion":"1.0","source":"/s","type":"t"}`, "id is required"},
		"old version":  {`{"specversion":"0.3","id":"1","source":"/s","type":"t"}`, "only CloudEvents 1.0 is spoken"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := ParseEvent([]byte(tc.in)); !errors.Is(err, ErrInvalidEvent) {
				t.Errorf("err = %v, want ErrInvalidEvent: %s", err, tc.reason)
			}
		})
	}
	var zero Event
	if _, err := json.Marshal(zero); !errors.Is(err, ErrInvalidEvent) {
		t.Errorf("marshal zero Event: err = %v, want ErrInvalidEvent", err)
	}
}

func TestCheckSubject(t *testing.T) {
	t.Parallel()
	cases := []struct {
		subject string
		ok      bool
		reason  string
	}{
		{"steward.instance.created", true, "literal subject under the root"},
		{"steward.x", true, "two tokens suffice"},
		{"steward", false, "the root alone is not a subject under it"},
		{"other.instance", false, "outside the stream"},
		{"steward.*", false, "wildcards are for subscribing"},
		{"steward.>", false, "wildcards are for subscribing"},
		{"steward..x", false, "empty token"},
		{"steward.a b", false, "whitespace"},
		{"", false, "empty"},
	}
	for _, tc := range cases {
		err := checkSubject(tc.subject)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidSubject)) {
			t.Errorf("checkSubject(%q) = %v, want ok=%v: %s", tc.subject, err, tc.ok, tc.reason)
		}
	}
}
