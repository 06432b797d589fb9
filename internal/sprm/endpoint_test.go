package sprm_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// Finding 5 (SSRF): a registration (Steward's and DCM's form) or a PATCH
// may not point Steward at the metadata service, link-local or unspecified
// addresses, nor, unless --provider-allow-cidr opens them, private ranges;
// nor carry a user name and password. Each is 400 INVALID_ARGUMENT naming
// the endpoint. Loopback is open by default, and an allow list opens a
// private range.
func TestRegister_RefusesEndpointsStewardMustNotCall(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, fast, func(c *server.Config) {
			c.ProviderAllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.20.0.0/16")}
		})
		p := providertest.New(t)
		s.Do(t, "POST", "/api/v1/providers", p.Registration("good-sp", "vm")).Want(t, http.StatusCreated)

		wantRefused := func(t *testing.T, r *apitest.Response) {
			t.Helper()
			pr := r.WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
			if len(pr.Fields) != 1 || pr.Fields[0]["field"] != "endpoint" {
				t.Errorf("problem fields %v, want the endpoint alone", pr.Fields)
			}
		}
		for _, endpoint := range []string{
			"ftp://203.0.113.7",
			"http://user:pass@203.0.113.7:9000",
			"http://token@203.0.113.7",
			"http://203.0.113.7/?q=1",
			"http://169.254.169.254/latest/meta-data",
			"http://[fe80::1]:8080",
			"http://metadata.google.internal",
			"http://metadata",
			"http://0.0.0.0:9000",
			"http://[::]:9000",
			"http://10.0.0.5:9000",
			"http://172.16.0.1",
			"http://192.168.1.10",
			"http://100.64.0.1",
			"http://[fd00::1]:9000",
			"http://[::1]:9000", // loopback, but only 127.0.0.0/8 is allowed here
		} {
			t.Run(endpoint, func(t *testing.T) {
				reg := p.Registration("bad-sp", "vm")
				reg.Endpoint = endpoint
				wantRefused(t, s.Do(t, "POST", "/api/v1/providers", reg))
				wantRefused(t, s.Do(t, "POST", "/api/v1/providers", map[string]any{
					"name": "bad-sp", "endpoint": endpoint, "service_type": "vm"})) // DCM's form
				wantRefused(t, s.Do(t, "PATCH", "/api/v1/providers/good-sp", map[string]any{"endpoint": endpoint}))
			})
		}
		s.Do(t, "GET", "/api/v1/providers/bad-sp", nil).WantProblem(t, http.StatusNotFound, "PROVIDER_NOT_FOUND")

		allowed := p.Registration("cluster-sp", "vm")
		allowed.Endpoint = "http://10.20.0.9:9000"
		s.Do(t, "POST", "/api/v1/providers", allowed).Want(t, http.StatusCreated)
	})
}

// Finding 5 (SSRF): what counts is where a name leads when Steward
// connects, since DNS may answer otherwise than at registration. localhost
// passes registration (a name) but resolves to loopback, which this server
// does not allow: its health checks fail without a connection ever
// reaching the provider.
func TestProviderCalls_ConnectOnlyToAllowedAddresses(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, fast, func(c *server.Config) { c.ProviderAllowCIDRs = []netip.Prefix{} })
		p := providertest.New(t)
		reg := p.Registration("named-sp", "vm")
		reg.Endpoint = strings.Replace(p.URL(), "127.0.0.1", "localhost", 1)
		s.Do(t, "POST", "/api/v1/providers", reg).Want(t, http.StatusCreated)
		var got struct {
			Health struct {
				ConsecutiveFailures int    `json:"consecutive_failures"`
				Message             string `json:"message"`
			} `json:"health"`
		}
		poll.Until(t, "a health check of named-sp fails", func() bool {
			s.Do(t, "GET", "/api/v1/providers/named-sp", nil).Want(t, http.StatusOK).JSON(t, &got)
			return got.Health.ConsecutiveFailures > 0
		})
		if want := "health check failed: address not allowed (--provider-allow-cidr)"; got.Health.Message != want {
			t.Errorf("health message %q, want %q", got.Health.Message, want)
		}
		if calls := p.Calls(); len(calls) != 0 {
			t.Errorf("the provider at a refused address was called: %+v", calls)
		}
	})
}

// Finding 5 (SSRF): an endpoint's answers are not shown. A "provider" that
// answers every health check 500 with an internal service's secret is
// degraded with the status alone in its health message, in the API, on the
// console's providers page, in the audit log and in the log at info and
// above.
func TestHealth_AnswerBodyIsNeverShown(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-INTERNAL-DATA"
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		var logs apitest.Logs
		s := apitest.Start(t, engine, fast, logs.CaptureLogs)
		internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, secret+": db password hunter2", http.StatusInternalServerError)
		}))
		t.Cleanup(internal.Close)
		s.Do(t, "POST", "/api/v1/providers", map[string]any{
			"name": "internal-sp", "endpoint": internal.URL, "service_types": []string{"vm"}}).Want(t, http.StatusCreated)

		var got struct {
			Status string `json:"status"`
			Health struct {
				ConsecutiveFailures int    `json:"consecutive_failures"`
				Message             string `json:"message"`
			} `json:"health"`
		}
		var r *apitest.Response
		poll.Until(t, "a health check of internal-sp fails", func() bool {
			r = s.Do(t, "GET", "/api/v1/providers/internal-sp", nil).Want(t, http.StatusOK)
			r.JSON(t, &got)
			return got.Health.ConsecutiveFailures > 0
		})
		if got.Health.Message != "health check answered 500" {
			t.Errorf("health message %q, want the status alone", got.Health.Message)
		}
		for what, text := range map[string]string{
			"GET /api/v1/providers/internal-sp": string(r.Body),
			"GET /api/v1/providers":             string(s.Do(t, "GET", "/api/v1/providers", nil).Want(t, http.StatusOK).Body),
			"GET /ui/providers":                 string(s.Do(t, "GET", "/ui/providers", nil).Want(t, http.StatusOK).Body),
			"the audit log":                     string(s.Do(t, "GET", "/api/v1/audit-events?target=provider:internal-sp", nil).Want(t, http.StatusOK).Body),
			"the log":                           logs.String(),
		} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows the endpoint's answer:\n%s", what, text)
			}
		}
	})
}
