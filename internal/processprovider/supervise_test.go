package processprovider

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	failed := exit{code: 2}
	clean := exit{code: 0}
	killed := exit{code: -1, signal: syscall.SIGKILL}
	cases := []struct {
		name        string
		reason      string
		policy      restartPolicy
		max         int
		consecutive int
		exit        exit
		wantRestart bool
		wantMessage string
	}{
		{name: "AlwaysClean", reason: "always restarts a clean exit", policy: restartAlways, max: 5, exit: clean, wantRestart: true},
		{name: "AlwaysFailed", reason: "always restarts a failure", policy: restartAlways, max: 5, exit: failed, wantRestart: true},
		{name: "AlwaysExhausted", reason: "max_restarts bounds always too", policy: restartAlways, max: 2, consecutive: 2, exit: clean, wantMessage: "gave up after 2 restarts (max_restarts 2)"},
		{name: "OnFailureFailed", reason: "on_failure restarts a non-zero exit", policy: restartOnFailure, max: 5, consecutive: 4, exit: failed, wantRestart: true},
		{name: "OnFailureKilled", reason: "on_failure restarts a death by signal", policy: restartOnFailure, max: 5, exit: killed, wantRestart: true},
		{name: "OnFailureClean", reason: "on_failure leaves a clean exit, as completed", policy: restartOnFailure, max: 5, exit: clean, wantMessage: "completed: the process exited with status 0; restart_policy on_failure does not restart a clean exit"},
		{name: "OnFailureExhausted", reason: "past max_restarts a failure is final", policy: restartOnFailure, max: 5, consecutive: 5, exit: failed, wantMessage: "exited with status 2; gave up after 5 restarts"},
		{name: "NeverFailed", reason: "never leaves a failure, with its status", policy: restartNever, max: 5, exit: failed, wantMessage: "process exited with status 2; restart_policy never"},
		{name: "NeverKilled", reason: "never leaves a death by signal, naming it", policy: restartNever, max: 5, exit: killed, wantMessage: "process was killed by signal 9 (killed)"},
		{name: "NeverClean", reason: "never leaves a clean exit, as completed", policy: restartNever, max: 5, exit: clean, wantMessage: "completed: the process exited with status 0; restart_policy never"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			restart, msg := decide(spec{policy: tc.policy, maxRestarts: tc.max}, tc.consecutive, tc.exit)
			if restart != tc.wantRestart {
				t.Errorf("%s\nrestart = %v, want %v (message %q)", tc.reason, restart, tc.wantRestart, msg)
			}
			if !strings.Contains(msg, tc.wantMessage) || (tc.wantRestart && msg != "") {
				t.Errorf("%s\nmessage = %q, want it to contain %q", tc.reason, msg, tc.wantMessage)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n    int
		want time.Duration
	}{
		{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {5, 16 * time.Second},
		{6, 30 * time.Second}, {100, 30 * time.Second},
	}
	for _, tc := range cases {
		if got := backoff(time.Second, 30*time.Second, tc.n); got != tc.want {
			t.Errorf("backoff(1s, 30s, %d) = %v, want %v (doubling, capped)", tc.n, got, tc.want)
		}
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		stat      string
		wantState byte
		wantPgrp  int
		wantOK    bool
	}{
		{stat: "123 (sleep) S 1 120 120 0 -1", wantState: 'S', wantPgrp: 120, wantOK: true},
		{stat: "7 (a) b) (c) Z 1 7 7 0", wantState: 'Z', wantPgrp: 7, wantOK: true},
		{stat: "garbage"},
		{stat: "1 (x) R 0"},
	}
	for _, tc := range cases {
		state, pgrp, ok := parseStat([]byte(tc.stat))
		if state != tc.wantState || pgrp != tc.wantPgrp || ok != tc.wantOK {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", tc.stat, state, pgrp, ok, tc.wantState, tc.wantPgrp, tc.wantOK)
		}
	}
}
