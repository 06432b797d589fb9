package cli

import (
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
	if err := flagsFromEnv(fs, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if *dbURL != "postgres://x" || *listen != "127.0.0.1:9" || !*dev {
		t.Fatalf("database-url %q listen %q dev %v", *dbURL, *listen, *dev)
	}
	t.Setenv("STEWARD_DEV", "not-a-bool")
	fs2 := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs2.Bool("dev", false, "")
	if err := flagsFromEnv(fs2, func(string) bool { return true }); err == nil {
		t.Fatal("a malformed STEWARD_DEV was accepted")
	}
}
