package ctl

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/pkg/client"
)

// TokenRequest is a token `steward token create` asks for.
type TokenRequest struct {
	Name, Role, Project, Provider, Adapter string
	ServiceTypes, Projects                 []string
	TTL                                    time.Duration
}

// TokenCreator adds the connection flags (--server, --token, --context,
// --config, --request-timeout; not --project, which there is the token's)
// to `steward token create` and returns what creates a token through the
// API: ok is false when the command line names no server (no --server,
// STEWARD_SERVER or config context), so that the caller writes the
// database directly instead.
func TokenCreator(cmd *cobra.Command) func(ctx context.Context, r TokenRequest) (secret string, ok bool, err error) {
	cf := &connFlags{}
	cf.registerConnection(cmd)
	return func(ctx context.Context, r TokenRequest) (string, bool, error) {
		if !cmd.Flags().Changed("server") {
			c, err := cf.currentContext()
			if err != nil || c == nil {
				return "", false, err
			}
		}
		c, err := cf.connect(cmd)
		if err != nil {
			return "", true, err
		}
		body := client.CreateTokenRequest{Name: r.Name, Role: client.CreateTokenRequestRole(r.Role), Project: opt(r.Project),
			Provider: opt(r.Provider), Adapter: opt(r.Adapter)}
		if len(r.ServiceTypes) > 0 {
			body.ServiceTypes = &r.ServiceTypes
		}
		if len(r.Projects) > 0 {
			body.Projects = &r.Projects
		}
		if r.TTL > 0 {
			secs := int64(r.TTL / time.Second)
			body.TtlSeconds = &secs
		}
		raw, _, err := c.call(ctx, func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
			return api.CreateToken(ctx, nil, body)
		})
		if err != nil {
			return "", true, err
		}
		o, err := decodeObject(raw)
		if err != nil {
			return "", true, err
		}
		if o.str("token") == "" {
			return "", true, fmt.Errorf("the server's answer has no token")
		}
		return o.str("token"), true, nil
	}
}
