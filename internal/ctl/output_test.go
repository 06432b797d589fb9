package ctl

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenNow is the clock of the golden tables: their AGE columns count
// from it.
var goldenNow = time.Date(2026, 11, 24, 18, 50, 0, 0, time.UTC)

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/ctl -run %s -update writes it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// fixture reads testdata/<kind>.json, a list as `steward get KIND -o json`
// printed it from a real server.
func fixture(t *testing.T, k *kind) []object {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", k.name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		t.Fatal(err)
	}
	objs := make([]object, len(raws))
	for i, r := range raws {
		if objs[i], err = decodeObject(r); err != nil {
			t.Fatal(err)
		}
	}
	return objs
}

// Issue 13: the table of every kind, plain and wide, against golden files.
func TestTables_Golden(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			objs := fixture(t, k)
			for _, format := range []string{outTable, outWide} {
				var b bytes.Buffer
				if err := (printer{w: &b, k: k, format: format, now: goldenNow}).list(objs); err != nil {
					t.Fatal(err)
				}
				name := k.name + ".table"
				if format == outWide {
					name = k.name + ".wide"
				}
				golden(t, name, b.Bytes())
			}
			if k.acrossProjects { // get -A: PROJECT first, not twice in -o wide
				var b bytes.Buffer
				if err := (printer{w: &b, k: k, format: outWide, now: goldenNow, allProjects: true}).list(objs); err != nil {
					t.Fatal(err)
				}
				golden(t, k.name+".all-projects", b.Bytes())
			}
		})
	}
}

// Issue 13: describe of an order lists every member in the server's order.
// Issue 46: its status message, a failure detail and all, is shown once:
// the last error and the Ready condition that quote it do not repeat it.
func TestDescribe_Golden(t *testing.T) {
	for _, o := range fixture(t, orders) {
		if o.str("id") != "bad" {
			continue
		}
		sayStatusOnce(o) // as describe does for an order
		var b bytes.Buffer
		if err := describe(&b, o); err != nil {
			t.Fatal(err)
		}
		golden(t, "describe-order.golden", b.Bytes())
		return
	}
	t.Fatal("no order bad in the fixture")
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 0: "0s", 45 * time.Second: "45s", 119 * time.Second: "119s", 2 * time.Minute: "2m",
		119 * time.Minute: "119m", 2 * time.Hour: "2h", 47 * time.Hour: "47h", 48 * time.Hour: "2d", 400 * 24 * time.Hour: "400d",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// Issue 46: the lifecycle log does not repeat the status message that
// describe shows above it, in a report or in a failed transfer.
func TestEventDetail_StatusMessageOnce(t *testing.T) {
	const msg = "process exited with status 1; restart_policy never; stderr: sleep: invalid time interval 'x'"
	for name, tc := range map[string]struct{ event, want string }{
		"report": {`{"reported_by": "process-sp", "changes": {"status": {"from": "RUNNING", "to": "FAILED"},
			"status_message": {"from": "running as pid 7", "to": "` + msg + `"}}}`,
			"process-sp: status RUNNING -> FAILED; status_message running as pid 7 -> (see Status Message)"},
		"earlier report": {`{"reported_by": "process-sp", "changes": {"status_message": {"from": "starting", "to": "running as pid 7"}}}`,
			"process-sp: status_message starting -> running as pid 7"},
		"failed transfer": {`{"error": "resource i-1 is FAILED: ` + msg + `"}`, "resource i-1 is FAILED"},
		"another error":   {`{"error": "resource i-1 is FAILED: exited with status 2"}`, "resource i-1 is FAILED: exited with status 2"},
	} {
		ev, err := decodeObject([]byte(tc.event))
		if err != nil {
			t.Fatal(err)
		}
		if got := eventDetail(ev, msg); got != tc.want {
			t.Errorf("%s: eventDetail = %q, want %q", name, got, tc.want)
		}
	}
}
