package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 28: the deployment examples (the systemd unit, the quadlets, the
// shared environment file) name only commands, flags and STEWARD_*
// variables that steward has: a flag renamed later fails here, not on a
// platform team's host.
func TestExamples_NameRealCommandsAndFlags(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../deploy/*/*.*")
	if err != nil {
		t.Fatal(err)
	}
	commands := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".service") && !strings.HasSuffix(f, ".container") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			key, value, ok := strings.Cut(line, "=")
			if !ok || !commandKeys[key] {
				continue
			}
			args := strings.Fields(value)
			if key == "Exec" { // a quadlet's Exec= is the image entrypoint's arguments
				args = append([]string{"steward"}, args...)
			}
			if len(args) == 0 || filepath.Base(args[0]) != "steward" {
				t.Errorf("%s: %s runs %q, not steward", f, key, value)
				continue
			}
			commands++
			root := newRoot(io.Discard, io.Discard)
			cmd, rest, err := root.Find(args[1:])
			if err != nil || cmd == root {
				t.Errorf("%s: %s: no steward command %q (%v)", f, key, strings.Join(args[1:], " "), err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s: %s: steward %s: %v", f, key, cmd.Name(), err)
			}
		}
	}
	if commands < 5 {
		t.Errorf("found %d steward command lines in deploy/*/, want the unit's two, the quadlets' two and the health command", commands)
	}

	env, err := os.ReadFile("../../deploy/steward.env.example")
	if err != nil {
		t.Fatal(err)
	}
	server := newServerCmd(io.Discard)
	for line := range strings.SplitSeq(string(env), "\n") {
		name, _, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "STEWARD_")), "_", "-")
		if !strings.HasPrefix(name, "STEWARD_") || server.Flags().Lookup(flag) == nil {
			t.Errorf("steward.env.example sets %s, which no flag of steward server reads", name)
		}
	}
}

// commandKeys are the unit and quadlet keys whose value is a command line.
var commandKeys = map[string]bool{"ExecStart": true, "ExecStartPre": true, "Exec": true, "HealthCmd": true}
