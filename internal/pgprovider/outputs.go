package pgprovider

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/pkg/provider"
)

// outputs are what an instance's users need to reach its database, its
// password aside (that is a credential, never an output), and what is
// observed of it now. An observation that fails leaves its values out
// rather than failing the answer: the database is there.
func (p *Provider) outputs(ctx context.Context, db database) provider.Outputs {
	out := provider.Outputs{"host": p.host, "port": p.port, "database": db.name,
		"username": db.owner, "sslmode": sslMode(p.base)}
	var size, connections int64
	err := p.admin.QueryRow(ctx, `SELECT pg_database_size($1::text),
		(SELECT count(*) FROM pg_stat_activity WHERE datname = $1::text)`, db.name).Scan(&size, &connections)
	if err != nil {
		p.log.WarnContext(ctx, "observe database", "database", db.name, "error", err)
		return out
	}
	out["size_bytes"], out["connections"] = size, connections
	return out
}

// advertised is the server's address in the outputs: advertise
// (host[:port]) or else the admin URL's.
func advertised(advertise string, admin *pgx.ConnConfig) (string, int, error) {
	if advertise == "" {
		return admin.Host, int(admin.Port), nil
	}
	host, portText, err := net.SplitHostPort(advertise)
	if err != nil { // no port: the admin URL's
		host, portText = strings.Trim(advertise, "[]"), strconv.Itoa(int(admin.Port))
	}
	port, err := strconv.Atoi(portText)
	if host == "" || strings.ContainsAny(host, "/ @?#") || err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("pgprovider: the advertised address %q is not host[:port]", advertise)
	}
	return host, port, nil
}

// sslMode names the TLS the owners connect with (the admin URL's), as
// libpq's sslmode would.
func sslMode(c *pgx.ConnConfig) string {
	switch {
	case c.TLSConfig == nil:
		return "disable"
	case len(c.Fallbacks) > 0 && c.Fallbacks[0].TLSConfig == nil:
		return "prefer"
	case c.TLSConfig.VerifyPeerCertificate != nil:
		return "verify-ca"
	case c.TLSConfig.InsecureSkipVerify:
		return "require"
	}
	return "verify-full"
}
