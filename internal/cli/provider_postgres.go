package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/pgprovider"
)

// envPGAdminURL gives the admin URL without putting it on the command line.
const envPGAdminURL = "STEWARD_PG_ADMIN_URL"

// pgKeyFile is the secret key's file in the data directory.
const pgKeyFile = "postgres-provider.key"

var pgState = providerState{provider: "postgres", legacy: pgKeyFile, what: "a secret key the owners' passwords are derived from",
	flag: "--secret-file"}

func newPostgresProviderCmd(stderr io.Writer) *cobra.Command {
	var cfg pgprovider.DaemonConfig
	var adminURL, adminURLFile, secretFile, dataDir string
	var shared *providerFlags
	targets := &backendsFlag{name: "target", backend: "server",
		keys:    []string{"name", "admin-url", "admin-url-file", "listen", "advertise", "label"},
		singles: []string{"name", "admin-url", "admin-url-file", "listen", "label", "advertise"}}
	cmd := &cobra.Command{
		Use:   "postgres",
		Short: "Realise postgres-database orders as databases on a PostgreSQL server",
		Long: `Realise orders of the built-in service type postgres-database as a database and
the LOGIN role that owns it, on a PostgreSQL server Steward does not own. The
admin URL names the server and a role that may create databases and roles; it
comes from --admin-url-file, ` + envPGAdminURL + ` or --admin-url (visible in ps),
and its password appears in no log, event or error.

The owners' passwords are derived from the provider's secret key
(--secret-file, default postgres-provider.key in --data-dir, created 0600 on
first start): keep the file, and give every process serving the same server
the same one. The provider refuses to start while a postgres-provider.key
an earlier version wrote in the current directory is there, and says where
it now belongs.

The provider registers with Steward (--steward-url, or STEWARD_SERVER;
retrying until accepted) under --name, with each --label as its metadata
(policies may place orders by them, e.g. region=eu). Its bearer token comes
from --token-file or --token, else STEWARD_TOKEN_FILE or STEWARD_TOKEN.

One process may serve several servers: give each as --target
name=N,admin-url-file=F[,listen=ADDR][,advertise=HOST[:PORT]][,label=k=v…] (or
admin-url=URL) instead of --name, --admin-url…, --listen, --advertise and --label. Each registers as a provider of
its own, with its own API address; the key, the allowed extensions, the dump
directory, the drift settings and the Steward URLs are shared.

Every --observe-interval the provider compares each database with its order's
spec (owner, login, connections allowed, connection limit, extensions) and
reports what differs: the order shows Synced=False naming it. With
--drift=enforce it puts the database back and says what it fixed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if cfg.Logger, err = shared.logs.logger(stderr); err != nil {
				return err
			}
			if cfg.Drift != pgprovider.DriftReport && cfg.Drift != pgprovider.DriftEnforce {
				return fmt.Errorf("--drift is report or enforce, not %q", cfg.Drift)
			}
			if cfg.ObserveInterval == 0 {
				cfg.ObserveInterval = -1 // the daemon's zero is its default
			}
			if err := shared.resolveToken(); err != nil {
				return err
			}
			if secretFile == "" {
				if secretFile, err = pgState.path(dataDir, pgKeyFile); err != nil {
					return err
				}
			}
			key, err := pgprovider.LoadOrCreateKey(secretFile)
			if err != nil {
				return err
			}
			cfg.Provider.SecretKey = key
			return serveBackends(cmd, shared, targets, &cfg, func() (err error) {
				cfg.Provider.AdminURL, err = resolveAdminURL(adminURL, adminURLFile)
				return err
			}, parseTarget, pgprovider.NewDaemon)
		},
	}
	shared = newProviderFlags(cmd, &cfg.Settings, pgprovider.Name, "127.0.0.1:9102")
	shared.registerLabels(cmd)
	f := cmd.Flags()
	f.StringVar(&adminURL, "admin-url", "", "postgres://user:password@host:port/database of the server and its admin role (env "+
		envPGAdminURL+"); visible to other users in ps: prefer --admin-url-file")
	f.StringVar(&adminURLFile, "admin-url-file", "", "a file holding the admin URL")
	f.StringVar(&cfg.Provider.Advertise, "advertise", "",
		"the server's address as the databases' users reach it, host[:port], shown in the orders' outputs (default: the admin URL's)")
	f.StringArrayVar(&cfg.Provider.AllowExtensions, "allow-extension", nil,
		"an extension orders may ask for; repeatable (none by default)")
	targets.register(cmd,
		"a server to serve, name=N,admin-url-file=F[,listen=ADDR][,advertise=HOST[:PORT]][,label=k=v]; repeatable, instead of --name, --admin-url…, --listen, --advertise, --label")
	f.DurationVar(&cfg.ObserveInterval, "observe-interval", time.Minute,
		"time between two comparisons of every database with its order's spec (drift); 0 never compares")
	f.StringVar(&cfg.Drift, "drift", pgprovider.DriftReport,
		"what a comparison does with a difference: report (the order shows Synced=False) or enforce (put it back, and say so)")
	f.StringVar(&cfg.Provider.DumpDir, "dump-dir", "",
		"where the final dump (pg_dump -Fc) of a database whose order asks for retain_on_delete is kept; without it such orders are refused")
	f.StringVar(&secretFile, "secret-file", "", "the provider's secret key, created on first start (default: "+pgKeyFile+" in --data-dir)")
	f.StringVar(&dataDir, "data-dir", "", "the directory of the provider's state, its secret key (default: "+stateDirHint(pgState)+")")
	return cmd
}

// resolveAdminURL returns the admin URL from the file, the environment or
// the flag, in that order; exactly one must give it.
func resolveAdminURL(flag, file string) (string, error) {
	env := os.Getenv(envPGAdminURL)
	given := 0
	for _, v := range []string{flag, file, env} {
		if v != "" {
			given++
		}
	}
	switch {
	case given == 0:
		return "", fmt.Errorf("the admin URL is required: --admin-url-file, %s or --admin-url", envPGAdminURL)
	case given > 1:
		return "", fmt.Errorf("the admin URL is given more than once (--admin-url-file, %s, --admin-url): give one", envPGAdminURL)
	case file != "":
		return readURLFile(file)
	case env != "":
		return env, nil
	}
	return flag, nil
}

// readURLFile reads an admin URL from a file.
func readURLFile(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("admin URL file: %w", err)
	}
	if u := strings.TrimSpace(string(b)); u != "" {
		return u, nil
	}
	return "", fmt.Errorf("admin URL file %s is empty", file)
}

// parseTarget reads one --target: name=N,admin-url-file=F or
// admin-url=URL, listen=ADDR, label=k=v (repeatable); base gives what the
// targets share.
func parseTarget(targets *backendsFlag, spec string, base pgprovider.DaemonConfig) (pgprovider.DaemonConfig, error) {
	d := base
	var urlFile, url string
	var err error
	d.Settings, err = targets.parse(spec, redactTarget(spec), base.Settings, func(key, value string) {
		switch key {
		case "admin-url":
			url = value
		case "admin-url-file":
			urlFile = value
		case "advertise":
			d.Provider.Advertise = value
		}
	})
	if err != nil {
		return d, err
	}
	if d.Name == "" {
		return d, fmt.Errorf("--target %q: name= is required", redactTarget(spec))
	}
	switch {
	case (url == "") == (urlFile == ""):
		return d, fmt.Errorf("--target %s: give one of admin-url-file= and admin-url=", d.Name)
	case urlFile != "":
		d.Provider.AdminURL, err = readURLFile(urlFile)
	default:
		d.Provider.AdminURL = url
	}
	return d, err
}

// redactTarget drops an admin-url= value from a --target for an error.
func redactTarget(spec string) string {
	parts := strings.Split(spec, ",")
	for i, p := range parts {
		if strings.HasPrefix(p, "admin-url=") {
			parts[i] = "admin-url=…"
		}
	}
	return strings.Join(parts, ",")
}
