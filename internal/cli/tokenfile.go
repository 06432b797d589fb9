package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// machineToken is the bearer token of a long-running command that calls
// Steward (a provider, an adapter): --token-file, so that it does not show
// in ps as --token would, or --token, or STEWARD_TOKEN.
type machineToken struct {
	token, file string
}

func (m *machineToken) register(cmd *cobra.Command, what string) {
	f := cmd.Flags()
	f.StringVar(&m.token, "token", "", what+"; visible to other users in ps: prefer --token-file or STEWARD_TOKEN")
	f.StringVar(&m.file, "token-file", "", "a file holding the bearer token (env STEWARD_TOKEN_FILE); read once at start")
}

// resolve returns the token: the file's content, trimmed, or --token.
func (m *machineToken) resolve() (string, error) {
	if m.file == "" {
		return m.token, nil
	}
	if m.token != "" {
		return "", fmt.Errorf("--token and --token-file both give a token: give one")
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
