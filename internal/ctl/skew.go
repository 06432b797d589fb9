package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/stewardhq/steward/api"
	"github.com/stewardhq/steward/pkg/client"
)

// serverSelf is what a server says of itself in GET /api/v1/health (issue
// 46, item 7: a client newer than its server printed an empty list for
// get -A and a bare 404 for whoami, and version warned of nothing).
type serverSelf struct {
	// version is the server's build; revision its api_revision, 0 for a
	// server older than revision 1 (it says none).
	version  string
	revision int
}

// older is what a client says of a server older than itself.
func (s serverSelf) older() string {
	return fmt.Sprintf("the server (version %s, API revision %d) is older than this client (API revision %d)",
		s.version, s.revision, api.Revision)
}

// serverSelf reads the server's health answer, once per command.
func (c *conn) serverSelf(ctx context.Context) (serverSelf, error) {
	if c.self != nil {
		return *c.self, nil
	}
	rsp, err := c.api.GetHealth(ctx)
	if err != nil {
		return serverSelf{}, c.transportError(err)
	}
	defer rsp.Body.Close()
	// 503 (a check failing) still says who the server is.
	var h struct {
		Version     string `json:"version"`
		APIRevision int    `json:"api_revision"`
	}
	if err := json.NewDecoder(io.LimitReader(rsp.Body, maxAnswer)).Decode(&h); err != nil {
		return serverSelf{}, fmt.Errorf("the server's health answer (%d): %w", rsp.StatusCode, err)
	}
	self := serverSelf{version: h.Version, revision: h.APIRevision}
	if self.version == "" {
		self.version = "unknown"
	}
	c.self = &self
	return self, nil
}

// requireRevision refuses what a server older than revision cannot do
// (what names it), rather than send it something it would misread.
func (c *conn) requireRevision(ctx context.Context, revision int, what string) error {
	self, err := c.serverSelf(ctx)
	if err != nil {
		return err
	}
	if self.revision < revision {
		return fmt.Errorf("%s needs a server of API revision %d or later: %s; upgrade the server", what, revision, self.older())
	}
	return nil
}

// explainUnknownRoute adds to a 404 for a route the server does not have,
// when the server is older than the client, that it is (printed as the
// problem's "server" line).
func (c *conn) explainUnknownRoute(ctx context.Context, err error) {
	var p *client.ProblemError
	if !errors.As(err, &p) || p.Status != http.StatusNotFound || p.Reason != "NOT_FOUND" {
		return // a resource that is not there names itself (ORDER_NOT_FOUND, …)
	}
	self, serr := c.serverSelf(ctx)
	if serr != nil || self.revision >= api.Revision {
		return
	}
	if p.Members == nil {
		p.Members = map[string]any{}
	}
	p.Members["server"] = self.older() + " and may not have this route: upgrade the server, or use a client of its version"
}

// skewWarning is what version says when client and server differ in API
// revision, or "" when they do not.
func skewWarning(self serverSelf) string {
	switch {
	case self.revision < api.Revision:
		return "warning: " + self.older() + ": commands it does not have answer 404, and get -A is refused; upgrade the server"
	case self.revision > api.Revision:
		return fmt.Sprintf("warning: the server (version %s, API revision %d) is newer than this client (API revision %d): "+
			"upgrade the client for what the server added", self.version, self.revision, api.Revision)
	}
	return ""
}
