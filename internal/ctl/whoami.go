package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/pkg/client"
)

// whoamiCmd is `steward whoami`: who the server takes the caller for.
func (e *env) whoamiCmd() *cobra.Command {
	var (
		cf  connFlags
		out string
	)
	cmd := &cobra.Command{
		Use:   "whoami",
		Short: "Print who the server takes you for: principal, role and project",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out != "" && out != outJSON && out != outYAML {
				return usagef("-o %q: whoami prints json or yaml", out)
			}
			c, err := cf.connect(cmd)
			if err != nil {
				return err
			}
			body, _, err := c.call(cmd.Context(), func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
				return api.GetCaller(ctx)
			})
			if err != nil {
				return err
			}
			var who client.Caller
			if err := json.Unmarshal(body, &who); err != nil {
				return fmt.Errorf("the server's whoami answer: %w", err)
			}
			if out != "" {
				return (printer{w: e.stdout, format: out}).encode(who)
			}
			fmt.Fprintf(e.stdout, "%s:%s, %s in project %s", who.Principal.Type, who.Principal.Id, who.Role, who.Project)
			if who.Provider != nil && *who.Provider != "" {
				fmt.Fprintf(e.stdout, ", for provider %s", *who.Provider)
			}
			if who.Adapter != nil && *who.Adapter != "" {
				fmt.Fprintf(e.stdout, ", for adapter %s", *who.Adapter)
			}
			if who.Open {
				fmt.Fprint(e.stdout, " (the server runs open: --dev)")
			}
			fmt.Fprintln(e.stdout)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "json or yaml")
	return cmd
}
