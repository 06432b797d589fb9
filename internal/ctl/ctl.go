// Package ctl holds the client half of the steward binary: the commands a
// person or a script runs against a Steward server (get, describe, order,
// apply, delete, wait, …), in the manner of kubectl and gh. Every call goes
// through the typed client pkg/client; this package only turns command
// lines into calls and answers into tables, JSON or YAML.
//
// Exit codes are stable: 0 success, 1 an error from the server or on the
// way to it (the problem's title, detail and fields are printed), 2 a usage
// error (unknown command, kind, flag or argument).
package ctl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/pkg/client"
)

// EnvFlags is the annotation that lists, comma-separated, the only flags of
// a command that may be read from STEWARD_* environment variables. Client
// commands take their connection from the environment, never a --set or
// an --id someone left exported.
const EnvFlags = "steward.env-flags"

const envFlagList = "server,token,context,config,project"

// Commands returns the client commands, to be added to the root command.
func Commands(stdout, stderr io.Writer) []*cobra.Command {
	e := &env{stdout: stdout, stderr: stderr, now: time.Now}
	cmds := []*cobra.Command{
		e.getCmd(), e.describeCmd(), e.orderCmd(), e.rehydrateCmd(), e.deleteCmd(), e.setStateCmd(),
		e.credentialsCmd(), e.rotateCredentialsCmd(),
		e.repairCmd("repair"), e.repairCmd("reconcile"), e.repairCmd("restart"),
		e.applyCmd(), e.waitCmd(), e.policyCmd(), e.configCmd(), e.versionCmd(), e.whoamiCmd(),
	}
	for _, c := range cmds {
		markClient(c)
	}
	return cmds
}

func markClient(c *cobra.Command) {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[EnvFlags] = envFlagList
	for _, sub := range c.Commands() {
		markClient(sub)
	}
}

// env is what every client command shares: where it writes, and the clock
// (tests fix it so that AGE columns are stable).
type env struct {
	stdout, stderr io.Writer
	now            func() time.Time
}

// connFlags are the flags that say which server to talk to and as whom.
type connFlags struct {
	server, token, context, config, project string
	timeout                                 time.Duration
}

// DefaultServer is the address `steward server` listens on by default.
const DefaultServer = "http://127.0.0.1:8080"

func (f *connFlags) register(cmd *cobra.Command) {
	f.registerConnection(cmd)
	cmd.Flags().StringVar(&f.project, "project", "", "the project to act in, for admins (sent as the Steward-Project header; env STEWARD_PROJECT;\n"+
		"default: the server's, default); project-bound tokens act in their own")
}

// registerConnection registers the flags that say where the server is and
// who calls.
func (f *connFlags) registerConnection(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.server, "server", "", "the Steward server's URL (env STEWARD_SERVER; default: the config file's current context, else "+DefaultServer+")")
	fs.StringVar(&f.token, "token", "", "bearer token (env STEWARD_TOKEN; default: the current context's)")
	fs.StringVar(&f.context, "context", "", "use this context of the config file instead of its current one (env STEWARD_CONTEXT)")
	fs.StringVar(&f.config, "config", "", "the config file (env STEWARD_CONFIG; default "+defaultConfigHint+")")
	fs.DurationVar(&f.timeout, "request-timeout", 30*time.Second, "timeout of each request to the server")
}

// conn is a connection to one server.
type conn struct {
	server string
	api    client.ClientInterface
	// project, when set, is sent as the Steward-Project header of every
	// request (auth.AllProjects for get -A).
	project string
	// self is what the server said of itself, read once (serverSelf).
	self *serverSelf
}

// connect resolves the server and token: a flag (or its STEWARD_*
// variable) wins over the config file's context, which wins over the
// default local address.
func (f *connFlags) connect(cmd *cobra.Command) (*conn, error) {
	server, token := f.server, f.token
	if !cmd.Flags().Changed("server") || !cmd.Flags().Changed("token") {
		ctx, err := f.currentContext()
		if err != nil {
			return nil, err
		}
		if ctx != nil {
			if !cmd.Flags().Changed("server") {
				server = ctx.Server
			}
			if !cmd.Flags().Changed("token") {
				token = ctx.Token
			}
		}
	}
	if server == "" {
		server = DefaultServer
	}
	if f.project == allProjects {
		return nil, usagef("--project %q: to list every project use -A (--all-projects)", f.project)
	}
	cn := &conn{server: server, project: f.project}
	hc := &http.Client{Timeout: f.timeout}
	c, err := client.New(server, token, client.WithHTTPClient(hc),
		client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			if cn.project != "" {
				req.Header.Set(projectHeader, cn.project)
			}
			return nil
		}))
	if err != nil {
		return nil, usagef("--server: %v", err)
	}
	cn.api = c.ClientInterface
	return cn, nil
}

// projectHeader names the project a request acts in; allProjects, from an
// admin, lists every project's orders.
const (
	projectHeader = "Steward-Project"
	allProjects   = "*"
)

// connectFor checks a command's -o value and the ids it names, then
// connects: a usage error is found before any request is made.
func (f *connFlags) connectFor(cmd *cobra.Command, output string, ids ...string) (*conn, error) {
	if err := checkOutput(output); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return nil, err
		}
	}
	return f.connect(cmd)
}

// currentContext is the context --context names, else the config file's
// current one; nil when there is none.
func (f *connFlags) currentContext() (*Context, error) {
	cfg, _, err := loadConfig(f.config)
	if err != nil {
		return nil, err
	}
	name := cmp.Or(f.context, cfg.CurrentContext)
	if name == "" {
		return nil, nil
	}
	c := cfg.find(name)
	if c == nil {
		if f.context != "" {
			return nil, usagef("--context: no context %q in the config file", name)
		}
		return nil, fmt.Errorf("the config file's current-context %q is not one of its contexts", name)
	}
	return c, nil
}

// UsageError is a command line the command cannot run: exit code 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ExitCode is the exit code for a command's error: 0 for nil, 2 for a
// usage error, 1 for anything else.
func ExitCode(err error) int {
	var u *UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u):
		return 2
	default:
		return 1
	}
}

// usageArgs wraps a cobra argument check so that its failure is a usage
// error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &UsageError{Msg: err.Error()}
		}
		return nil
	}
}

// checkID refuses an id that cannot stand in a path: the generated client
// escapes ids, but "." and ".." would resolve against the path around them
// (a GET of order ".." would read /api/v1/).
func checkID(id string) error {
	if id == "" || id == "." || id == ".." {
		return usagef("%q is not an id", id)
	}
	return nil
}

// checkKindID is checkID for an id of kind k, which may have several parts
// (APP_INSTANCE/OPERATION_ID); an id of one part has no slash.
func checkKindID(k *kind, id string) error {
	parts := strings.Split(id, "/")
	if want := max(k.idParts, 1); len(parts) != want {
		if want == 1 {
			return usagef("%q is not an id of %s (an id has no /; KIND/ID goes in place of KIND ID)", id, k.name)
		}
		return usagef("%q is not an id of %s: want %d parts separated by /", id, k.name, want)
	}
	for _, p := range parts {
		if err := checkID(p); err != nil {
			return err
		}
	}
	return nil
}

// withTimeout bounds a command that waits (--timeout), 0 meaning no bound.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
