package ctl

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// Config is the client's config file: named contexts, each a server and a
// token, and the one in use, as kubeconfig has.
//
//	current-context: prod
//	contexts:
//	- name: prod
//	  server: https://steward.example.com
//	  token: stw_…
type Config struct {
	CurrentContext string    `json:"current-context,omitempty"`
	Contexts       []Context `json:"contexts,omitempty"`
}

// Context is a named server and token.
type Context struct {
	Name   string `json:"name"`
	Server string `json:"server,omitempty"`
	Token  string `json:"token,omitempty"`
}

func (c *Config) find(name string) *Context {
	for i := range c.Contexts {
		if c.Contexts[i].Name == name {
			return &c.Contexts[i]
		}
	}
	return nil
}

const defaultConfigHint = "$XDG_CONFIG_HOME/steward/config.yaml"

// configPath is path, else $XDG_CONFIG_HOME/steward/config.yaml (or the
// platform's user config directory).
func configPath(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config file: %w (set --config or STEWARD_CONFIG)", err)
	}
	return filepath.Join(dir, "steward", "config.yaml"), nil
}

// loadConfig reads the config file; a missing one is an empty config.
func loadConfig(path string) (*Config, string, error) {
	path, err := configPath(path)
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{}, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	var c Config
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, path, fmt.Errorf("config file %s: %w", path, err)
	}
	return &c, path, nil
}

// save writes the config atomically and readable by its owner only: it
// holds tokens.
func (c *Config) save(path string) error {
	b, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// configCmd is `steward config`: the contexts of the config file.
func (e *env) configCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Manage the client's contexts (server and token pairs)",
		Long: "The config file keeps named contexts, each a server URL and a bearer token, and which\n" +
			"one is current. --server/STEWARD_SERVER and --token/STEWARD_TOKEN override it.\n\n" +
			"  steward config set-context prod --server https://steward.example.com --token stw_…\n" +
			"  steward config use-context prod",
	}
	cmd.PersistentFlags().StringVar(&file, "config", "", "the config file (env STEWARD_CONFIG; default "+defaultConfigHint+")")
	edit := func(change func(c *Config) (string, error)) func(*cobra.Command, []string) error {
		return func(*cobra.Command, []string) error {
			c, path, err := loadConfig(file)
			if err != nil {
				return err
			}
			msg, err := change(c)
			if err != nil {
				return err
			}
			if err := c.save(path); err != nil {
				return err
			}
			_, err = fmt.Fprintln(e.stdout, msg)
			return err
		}
	}

	var set Context
	setCtx := &cobra.Command{
		Use:   "set-context NAME [--server URL] [--token TOKEN]",
		Short: "Create a context or change its server or token",
		Args:  usageArgs(cobra.ExactArgs(1)),
	}
	setCtx.Flags().StringVar(&set.Server, "server", "", "the server's URL")
	setCtx.Flags().StringVar(&set.Token, "token", "", "the bearer token")
	setCtx.RunE = func(cmd *cobra.Command, args []string) error {
		return edit(func(c *Config) (string, error) {
			ctx := c.find(args[0])
			verb := "modified"
			if ctx == nil {
				c.Contexts = append(c.Contexts, Context{Name: args[0]})
				ctx, verb = &c.Contexts[len(c.Contexts)-1], "created"
			}
			if cmd.Flags().Changed("server") {
				ctx.Server = set.Server
			}
			if cmd.Flags().Changed("token") {
				ctx.Token = set.Token
			}
			if c.CurrentContext == "" {
				c.CurrentContext = ctx.Name
			}
			return fmt.Sprintf("context %q %s", ctx.Name, verb), nil
		})(cmd, args)
	}

	use := &cobra.Command{
		Use:               "use-context NAME",
		Short:             "Make a context the current one",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeContexts(&file),
		RunE: func(cmd *cobra.Command, args []string) error {
			return edit(func(c *Config) (string, error) {
				if c.find(args[0]) == nil {
					return "", usagef("no context %q in the config file (steward config get-contexts lists them)", args[0])
				}
				c.CurrentContext = args[0]
				return fmt.Sprintf("switched to context %q", args[0]), nil
			})(cmd, args)
		},
	}

	del := &cobra.Command{
		Use:               "delete-context NAME",
		Short:             "Remove a context",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeContexts(&file),
		RunE: func(cmd *cobra.Command, args []string) error {
			return edit(func(c *Config) (string, error) {
				i := slices.IndexFunc(c.Contexts, func(x Context) bool { return x.Name == args[0] })
				if i < 0 {
					return "", usagef("no context %q in the config file", args[0])
				}
				c.Contexts = slices.Delete(c.Contexts, i, i+1)
				if c.CurrentContext == args[0] {
					c.CurrentContext = ""
				}
				return fmt.Sprintf("context %q deleted", args[0]), nil
			})(cmd, args)
		},
	}

	list := &cobra.Command{
		Use:   "get-contexts",
		Short: "List the contexts; * marks the current one",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			c, _, err := loadConfig(file)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 8, 3, ' ', 0)
			fmt.Fprintln(tw, "CURRENT\tNAME\tSERVER\tTOKEN")
			for _, x := range c.Contexts {
				cur, tok := "", "<none>"
				if x.Name == c.CurrentContext {
					cur = "*"
				}
				if x.Token != "" {
					tok = "<set>"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cur, x.Name, cmp.Or(x.Server, DefaultServer), tok)
			}
			return tw.Flush()
		},
	}

	current := &cobra.Command{
		Use:   "current-context",
		Short: "Print the current context's name",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			c, _, err := loadConfig(file)
			if err != nil {
				return err
			}
			if c.CurrentContext == "" {
				return errors.New("no current context (steward config use-context NAME sets one)")
			}
			_, err = fmt.Fprintln(e.stdout, c.CurrentContext)
			return err
		},
	}
	cmd.AddCommand(setCtx, use, del, list, current)
	return cmd
}

// completeContexts completes the config file's context names.
func completeContexts(file *string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, _, err := loadConfig(*file)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []cobra.Completion
		for _, x := range c.Contexts {
			names = append(names, x.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
