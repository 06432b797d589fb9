package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestFlagsFromEnv_FillsOnlyUnsetFlags(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	dbURL := fs.String("database-url", "", "")
	listen := fs.String("listen", "127.0.0.1:8080", "")
	dev := fs.Bool("dev", false, "")
	if err := fs.Parse([]string{"--listen", "127.0.0.1:9"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STEWARD_DATABASE_URL", "postgres://x")
	t.Setenv("STEWARD_LISTEN", "0.0.0.0:1") // the command line wins
	t.Setenv("STEWARD_DEV", "true")
	if err := setFromEnv(fs, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if *dbURL != "postgres://x" || *listen != "127.0.0.1:9" || !*dev {
		t.Fatalf("database-url %q listen %q dev %v", *dbURL, *listen, *dev)
	}
	t.Setenv("STEWARD_DEV", "not-a-bool")
	fs2 := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs2.Bool("dev", false, "")
	if err := setFromEnv(fs2, func(string) bool { return true }); err == nil {
		t.Fatal("a malformed STEWARD_DEV was accepted")
	}
}

// Issue 46, item 5: every command that takes Steward's URL and a token
// reads STEWARD_SERVER and STEWARD_TOKEN when its command line gives
// none, and names them in its help.
func TestStewardURLAndToken_FromTheSameEnvEverywhere(t *testing.T) {
	t.Setenv("STEWARD_SERVER", "http://steward.example:8080,http://replica.example:8080")
	t.Setenv("STEWARD_TOKEN", "env-token")
	root := newRoot(io.Discard, io.Discard)
	for path, urlFlag := range map[string]string{
		"provider process": "steward-url", "provider postgres": "steward-url", "provider kubernetes": "steward-url",
		"adapter": "server", "get": "server", "healthcheck": "server",
	} {
		cmd, _, err := root.Find(strings.Fields(path))
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags(nil); err != nil {
			t.Fatal(err)
		}
		if err := flagsFromEnv(cmd); err != nil {
			t.Fatal(err)
		}
		f := cmd.Flags().Lookup(urlFlag)
		if got := strings.Trim(f.Value.String(), "[]"); !strings.HasPrefix(got, "http://steward.example:8080") {
			t.Errorf("steward %s --%s from STEWARD_SERVER: %q", path, urlFlag, got)
		}
		if path != "healthcheck" && !strings.Contains(f.Usage, "STEWARD_SERVER") {
			t.Errorf("steward %s --%s does not name STEWARD_SERVER: %q", path, urlFlag, f.Usage)
		}
		if tf := cmd.Flags().Lookup("token"); path != "healthcheck" && (tf.Value.String() != "env-token" || !strings.Contains(tf.Usage, "STEWARD_TOKEN")) {
			t.Errorf("steward %s --token: %q, usage %q", path, tf.Value.String(), tf.Usage)
		}
	}
}
