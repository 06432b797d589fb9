package sprm

import (
	"net/url"

	"github.com/stewardhq/steward/internal/egress"
)

// endpointProblem says what is wrong with a registration's endpoint, or ""
// (finding 5, SSRF): it must be an absolute http or https URL without a
// user name or password (a secret Steward would send on every call, and
// show), query or fragment, whose host the address policy does not refuse.
// A name passes here; where it resolves is checked on each connection.
func endpointProblem(endpoint string, policy *egress.Policy) string {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "":
		return "must be an http or https URL"
	case u.User != nil:
		return "must not carry a user name or password"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "must have no query or fragment"
	}
	if err := policy.CheckHost(u.Hostname()); err != nil {
		return err.Error()
	}
	return ""
}
