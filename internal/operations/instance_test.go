package operations

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A failed operation's problem names the operation in `instance`
// (urn:steward:operation:<id>) when the renderer gave none or an empty one,
// and keeps one the renderer chose (issue 13: it was "").
func TestFinishTx_ErrorProblemNamesTheOperation(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		db := storetest.Open(t, engine)
		cases := []struct {
			name string
			body func(error) json.RawMessage
			// want is the instance, "" for the operation's own.
			want string
		}{
			{name: "default renderer", body: nil},
			{name: "no instance", body: func(error) json.RawMessage {
				return json.RawMessage(`{"type":"t","title":"Boom","status":409,"reason":"BOOM","detail":"boom"}`)
			}},
			{name: "empty instance", body: func(error) json.RawMessage {
				return json.RawMessage(`{"status":500,"reason":"INTERNAL","instance":""}`)
			}},
			{name: "an instance of its own is kept", want: "urn:example:x", body: func(error) json.RawMessage {
				return json.RawMessage(`{"status":500,"reason":"INTERNAL","instance":"urn:example:x"}`)
			}},
		}
		for _, tc := range cases {
			s := New(Config{DB: db, ErrorBody: tc.body})
			ctx := context.Background()
			var op Operation
			err := db.InTx(ctx, func(tx *store.Tx) (err error) {
				if op, err = s.StartTx(ctx, tx, StartParams{Project: "default", Kind: "rehydrate", Target: "resources/r"}); err != nil {
					return err
				}
				_, err = s.FinishTx(ctx, tx, op.ID, FinishParams{Err: errors.New("provider said no")})
				return err
			})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got, err := s.Get(ctx, "default", op.ID)
			if err != nil {
				t.Fatalf("%s: get: %v", tc.name, err)
			}
			var p map[string]any
			if err := json.Unmarshal(got.Error, &p); err != nil {
				t.Fatalf("%s: error %s: %v", tc.name, got.Error, err)
			}
			want := tc.want
			if want == "" {
				want = "urn:steward:operation:" + op.ID
			}
			if p["instance"] != want {
				t.Errorf("%s: error %s: instance = %v, want %q", tc.name, got.Error, p["instance"], want)
			}
			if tc.body != nil && p["reason"] == nil {
				t.Errorf("%s: error %s lost the renderer's members", tc.name, got.Error)
			}
		}
	})
}

func TestWithInstance_LeavesNonObjectsAlone(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`"text"`, `null`, `[1]`, `not json`} {
		if got := withInstance(json.RawMessage(body), "urn:x"); string(got) != body {
			t.Errorf("withInstance(%s) = %s, want it unchanged", body, got)
		}
	}
}

// An operation that failed before the instance was set (stored with
// "instance": "") reads back with the operation's.
func TestGet_OldErrorWithEmptyInstanceNamesTheOperation(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	s := New(Config{DB: db, ErrorBody: func(error) json.RawMessage { return json.RawMessage(`{"status":500}`) }})
	ctx := context.Background()
	var op Operation
	err := db.InTx(ctx, func(tx *store.Tx) (err error) {
		if op, err = s.StartTx(ctx, tx, StartParams{Project: "default", Kind: "delete", Target: "resources/r"}); err != nil {
			return err
		}
		_, err = s.q.OperationFinish(ctx, tx, OperationFinishParams{Response: nil,
			Error: json.RawMessage(`{"status":500,"instance":""}`), Metadata: json.RawMessage(`{}`),
			UpdateTime: op.UpdateTime, ID: op.ID})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "default", op.ID)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(got.Error, &p); err != nil || p["instance"] != "urn:steward:operation:"+op.ID {
		t.Fatalf("error %s (%v), want the operation's instance", got.Error, err)
	}
}
