package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/pkg/client"
)

// credentialsCmd is `steward credentials ORDER`: the credentials of an
// order's instance, asked of its provider (never stored by Steward).
func (e *env) credentialsCmd() *cobra.Command {
	var (
		cf  connFlags
		out string
	)
	cmd := &cobra.Command{
		Use:   "credentials ORDER",
		Short: "Print the credentials of an order (a database's user and password, ...)",
		Long: "Ask the order's provider, through Steward, for the credentials of the order's instance and\n" +
			"print them: -o json (the default) the whole answer; -o env the environment variables as\n" +
			"shell exports (eval \"$(steward credentials ORDER -o env)\"); -o url the connection URL.\n" +
			"Each read is recorded in the audit log. Steward keeps no copy: the provider answers each time.",
		Example: "  steward credentials app-db\n  eval \"$(steward credentials app-db -o env)\" && psql\n" +
			"  psql \"$(steward credentials app-db -o url)\"",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: e.completeIDs(&cf, orders),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains([]string{"json", "env", "url"}, out) {
				return usagef("-o is json, env or url, not %q", out)
			}
			id, err := idOf(args[0], orders)
			if err != nil {
				return err
			}
			c, err := cf.connectFor(cmd, "", id)
			if err != nil {
				return err
			}
			body, _, err := c.call(cmd.Context(), func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
				return api.GetCatalogItemInstanceCredentials(ctx, id)
			})
			if err != nil {
				return err
			}
			return writeCredentials(e, body, out)
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "json", "json, env or url")
	return cmd
}

// writeCredentials prints a credentials answer in format.
func writeCredentials(e *env, body []byte, format string) error {
	var c struct {
		URL string            `json:"url"`
		Env map[string]string `json:"env"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		return fmt.Errorf("read the credentials: %w", err)
	}
	switch format {
	case "url":
		if c.URL == "" {
			return fmt.Errorf("the provider gave no connection URL; see -o json")
		}
		_, err := fmt.Fprintln(e.stdout, c.URL)
		return err
	case "env":
		if len(c.Env) == 0 {
			return fmt.Errorf("the provider gave no environment variables; see -o json")
		}
		var b strings.Builder
		for _, name := range slices.Sorted(maps.Keys(c.Env)) {
			fmt.Fprintf(&b, "export %s=%s\n", name, shellQuote(c.Env[name]))
		}
		_, err := fmt.Fprint(e.stdout, b.String())
		return err
	}
	var pretty map[string]any
	if err := json.Unmarshal(body, &pretty); err != nil {
		return fmt.Errorf("read the credentials: %w", err)
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(pretty)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// rotateCredentialsCmd is `steward rotate-credentials ORDER`: have the
// provider replace the order's credentials (an Operation).
func (e *env) rotateCredentialsCmd() *cobra.Command {
	return e.orderOperationCmd(&cobra.Command{
		Use:   "rotate-credentials ORDER",
		Short: "Replace the credentials of an order; the old ones stop working",
		Long: "Start a rotation of the order's credentials (an Operation) and print it; --wait follows it to\n" +
			"its end. Once it is done the old password is refused; read the new one with steward credentials.",
		Example: "  steward rotate-credentials app-db --wait && steward credentials app-db -o url",
	}, func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
		return api.RotateCatalogItemInstanceCredentials(ctx, id, nil)
	})
}
