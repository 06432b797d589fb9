package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/server"
)

// newTokenCmd is `steward token create`: a bearer token made directly in the
// store, for the first admin of a server that has no one yet. Later tokens
// can also be made through the API (POST /api/v1/tokens).
func newTokenCmd(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage API bearer tokens"}
	var cfg server.CreateTokenConfig
	var ttl time.Duration
	create := &cobra.Command{
		Use:   "create --name NAME --role ROLE",
		Short: "Create a token in the store (prints it once)",
		Long: "Create a bearer token directly in the store, e.g. the first admin's:\n\n" +
			"  steward token create --name ops --role admin\n\n" +
			"Roles: admin; project_admin and user (with --project); service_account (with --provider or --adapter).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Token.TTL, cfg.Token.CreatedBy = ttl, "cli:steward-token-create"
			secret, err := server.CreateToken(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(stdout, secret)
			return err
		},
	}
	f := create.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", "steward-data", "the server's data directory (SQLite)")
	f.StringVar(&cfg.DatabaseURL, "database-url", "", "the server's PostgreSQL URL, when it uses PostgreSQL")
	f.StringVar(&cfg.Token.Name, "name", "", "who the token is for (the principal's id)")
	f.StringVar(&cfg.Role, "role", "", "admin, project_admin, user or service_account")
	f.StringVar(&cfg.Token.Project, "project", "", "the project of a project_admin or user")
	f.StringVar(&cfg.Token.Provider, "provider", "", "the provider a service_account reports for")
	f.StringVar(&cfg.Token.Adapter, "adapter", "", "the adapter a service_account reports as")
	f.DurationVar(&ttl, "ttl", 0, "expire the token after this long (default never)")
	cmd.AddCommand(create)
	return cmd
}
