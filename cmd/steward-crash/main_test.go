package main

import (
	"bytes"
	"strings"
	"testing"
)

// The command line is refused before anything is built or started; the
// trials themselves are internal/crashtest's tests.
func TestRun_RefusesBadCommandLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--trials", "0"}, 1, "--trials must be at least 1"},
		{[]string{"--binary", "/tmp/steward", "--build"}, 1, "--binary and --build exclude each other"},
		{[]string{"--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
		{[]string{"extra"}, 1, "unknown command"},
	} {
		var out, errOut bytes.Buffer
		code := run(t.Context(), tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("steward-crash %s: exit %d, stderr %q; want exit %d and %q",
				strings.Join(tc.args, " "), code, errOut.String(), tc.code, tc.want)
		}
	}
}

// Its help says what it tests without --binary: it is not the server, so
// it builds one.
func TestRun_HelpSaysWhichBinary(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"--help"}, &out, &errOut); code != 0 {
		t.Fatalf("--help: exit %d\n%s", code, errOut.String())
	}
	for _, want := range []string{"Without it, ./cmd/steward of the module in the\nworking directory is built", "go run ./cmd/steward-crash --trials 200"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not say %q:\n%s", want, out.String())
		}
	}
}
