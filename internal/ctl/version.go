package ctl

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/buildinfo"
)

// versionCmd is `steward version`: this binary's version and the server's.
func (e *env) versionCmd() *cobra.Command {
	var (
		cf         connFlags
		out        string
		clientOnly bool
	)
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client's version and the server's",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out != "" && out != outJSON && out != outYAML {
				return usagef("-o %q: version prints json or yaml", out)
			}
			v := struct {
				Client string `json:"client"`
				Server string `json:"server,omitempty"`
			}{Client: buildinfo.Version()}
			var serverErr error
			if !clientOnly {
				v.Server, serverErr = e.serverVersion(cmd, &cf)
			}
			if out != "" {
				if err := (printer{w: e.stdout, format: out}).encode(v); err != nil {
					return err
				}
				return serverErr
			}
			fmt.Fprintf(e.stdout, "Client: %s\n", v.Client)
			if v.Server != "" {
				fmt.Fprintf(e.stdout, "Server: %s\n", v.Server)
			}
			return serverErr
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "json or yaml")
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print the client's version only; do not ask the server")
	return cmd
}

// serverVersion asks the server's health endpoint for its version, and
// says on stderr when the server's API revision differs from the client's.
func (e *env) serverVersion(cmd *cobra.Command, cf *connFlags) (string, error) {
	c, err := cf.connect(cmd)
	if err != nil {
		return "", err
	}
	self, err := c.serverSelf(cmd.Context())
	if err != nil {
		return "", err
	}
	if w := skewWarning(self); w != "" {
		fmt.Fprintln(e.stderr, w)
	}
	return self.version, nil
}
