package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/ctl"
)

// The flags of a long-running command that calls Steward (a provider, an
// adapter): where Steward is, and the bearer token. They read the same
// environment as the client's --server and --token (flagsFromEnv).

// registerStewardURLs registers the flag (--steward-url of a provider,
// --server of an adapter) that gives Steward's URLs, one per replica.
func registerStewardURLs(cmd *cobra.Command, flag string, urls *[]string) {
	cmd.Flags().StringSliceVar(urls, flag, []string{ctl.DefaultServer},
		"Steward's base URL (env "+envServer+"); repeat it (or separate with commas) for several replicas, "+
			"tried in turn when one cannot be reached")
}

// machineToken is the bearer token: --token-file, so that it does not show
// in ps as --token would, or --token, or STEWARD_TOKEN_FILE or
// STEWARD_TOKEN when the command line gives neither.
type machineToken struct {
	token, file string
}

func (m *machineToken) register(cmd *cobra.Command, what string) {
	f := cmd.Flags()
	f.StringVar(&m.token, "token", "", what+" (env "+envToken+"); visible to other users in ps: prefer --token-file or "+envToken)
	f.StringVar(&m.file, "token-file", "", "a file holding the bearer token (env "+EnvName("token-file")+"); read once at start")
}

// resolve returns the token: the file's content, trimmed, or --token.
func (m *machineToken) resolve() (string, error) {
	if m.file == "" {
		return m.token, nil
	}
	if m.token != "" {
		return "", fmt.Errorf("--token (%s) and --token-file (%s) both give a token: give one", envToken, EnvName("token-file"))
	}
	b, err := os.ReadFile(m.file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("--token-file %s is empty", m.file)
	}
	return t, nil
}
