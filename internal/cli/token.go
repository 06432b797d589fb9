package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/ctl"
	"github.com/stewardhq/steward/internal/server"
)

// newTokenCmd is `steward token create`: a bearer token made through the
// API (POST /api/v1/tokens) when the command line names a server, else
// directly in the store, for the first admin of a server that has no one
// yet. Both leave a token.create audit record naming the token.
func newTokenCmd(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage API bearer tokens"}
	var cfg server.CreateTokenConfig
	var ttl time.Duration
	var viaAPI func(context.Context, ctl.TokenRequest) (string, bool, error)
	create := &cobra.Command{
		Use:   "create --name NAME --role ROLE",
		Short: "Create a token (prints it once)",
		Long: "Create a bearer token and print its secret, the only time it is shown.\n\n" +
			"With --server (STEWARD_SERVER) or a context of the config file, the token is made\n" +
			"through the API (POST /api/v1/tokens) as the caller of --token (STEWARD_TOKEN).\n" +
			"Otherwise, or with --data-dir or --database-url, it is written directly in the\n" +
			"server's database: how the first admin's token comes to be. Both write a token.create\n" +
			"audit record naming the token.\n\n" +
			"  steward token create --name ops --role admin --data-dir steward-data\n" +
			"  steward token create --name alice --role user --project team-a --server http://127.0.0.1:8080\n\n" +
			"Roles: admin; project_admin and user (with --project); service_account (with --provider and\n" +
			"--service-type, and --serve-project to keep it to some projects; or --adapter).",
		Args: cobra.NoArgs,
		// The connection and the database come from the environment, not
		// the token's --name, --role or --project.
		Annotations: map[string]string{ctl.EnvFlags: "server,token,context,config,data-dir,database-url"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Token.TTL, cfg.Token.CreatedBy = ttl, "cli:steward-token-create"
			if !cmd.Flags().Changed("data-dir") && !cmd.Flags().Changed("database-url") {
				secret, ok, err := viaAPI(cmd.Context(), ctl.TokenRequest{Name: cfg.Token.Name, Role: cfg.Role,
					Project: cfg.Token.Project, Provider: cfg.Token.Provider, Adapter: cfg.Token.Adapter,
					ServiceTypes: cfg.Token.ServiceTypes, Projects: cfg.Token.Projects, TTL: ttl})
				if ok || err != nil {
					if err != nil {
						return err
					}
					_, err = fmt.Fprintln(stdout, secret)
					return err
				}
			}
			cfg.Actor = localUser()
			secret, err := server.CreateToken(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(stdout, secret)
			return err
		},
	}
	viaAPI = ctl.TokenCreator(create)
	f := create.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", "steward-data", "the server's data directory (SQLite), to write the database directly")
	f.StringVar(&cfg.DatabaseURL, "database-url", "", "the server's PostgreSQL URL, to write the database directly")
	f.StringVar(&cfg.Token.Name, "name", "", "who the token is for (the principal's id)")
	f.StringVar(&cfg.Role, "role", "", "admin, project_admin, user or service_account")
	f.StringVar(&cfg.Token.Project, "project", "", "the project of a project_admin or user")
	f.StringVar(&cfg.Token.Provider, "provider", "", "the provider a service_account reports for")
	f.StringVar(&cfg.Token.Adapter, "adapter", "", "the adapter a service_account reports as")
	f.StringSliceVar(&cfg.Token.ServiceTypes, "service-type", nil,
		"a service type the --provider may register for (repeat it; \"*\": any); required with --provider")
	f.StringSliceVar(&cfg.Token.Projects, "serve-project", nil,
		"a project whose orders the --provider may serve (repeat it; default every project)")
	f.DurationVar(&ttl, "ttl", 0, "expire the token after this long (default never)")
	cmd.AddCommand(create)
	return cmd
}

// localUser names who runs the command, for the audit record of a token
// written directly in the database.
func localUser() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = cmp.Or(u.Username, name)
	}
	return "local:" + cmp.Or(name, "unknown")
}
