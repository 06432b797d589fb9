// Package client is a typed Go client of Steward's HTTP API. The request
// and response types and the client methods are generated from
// api/openapi.yaml by oapi-codegen (client.gen.go: one method per
// operation, named after its operationId, and a ParseXxxReply that decodes
// each documented answer); this file adds what the generator does not
// write: a constructor that authenticates, and the error type every
// problem+json answer decodes into.
//
//	c, err := client.New("http://127.0.0.1:8080", os.Getenv("STEWARD_TOKEN"))
//	reply, err := c.GetPolicyWithResponse(ctx, "vm-cap")
//	if err := client.Check(reply.HTTPResponse, reply.Body); err != nil {
//		var p *client.ProblemError
//		if errors.As(err, &p) && p.Reason == "POLICY_NOT_FOUND" { … }
//	}
package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// UserAgent is sent with every request unless a request editor replaces it.
const UserAgent = "steward-go-client"

// New returns a client of the Steward whose base URL is server
// (http://127.0.0.1:8080; the operations' paths start with /api/v1). A
// non-empty token is sent as a bearer token with every request. opts are
// the generated client's options (WithHTTPClient, WithRequestEditorFn).
func New(server, token string, opts ...ClientOption) (*ClientWithResponses, error) {
	server = strings.TrimSuffix(server, "/")
	if !strings.HasPrefix(server, "http://") && !strings.HasPrefix(server, "https://") {
		return nil, fmt.Errorf("steward client: server %q is not an http:// or https:// URL", server)
	}
	auth := func(_ context.Context, req *http.Request) error {
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if req.Header.Get("User-Agent") == "" {
			req.Header.Set("User-Agent", UserAgent)
		}
		return nil
	}
	return NewClientWithResponses(server, append([]ClientOption{WithRequestEditorFn(auth)}, opts...)...)
}
