package sprm_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// Issue 24: Steward presents the call token a provider registered on each
// call to it, and shows it nowhere. A provider that holds another token (it
// restarted and has not registered again) is unavailable for a while, not
// a refusal of the order: nothing is left behind, and a create after its
// registration succeeds.
func TestCallToken_PresentedOnEachCallAndShownNowhere(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		var logs apitest.Logs
		s := apitest.Start(t, engine, fast, logs.CaptureLogs)
		const first, second = "stp_first-secret-0123456789", "stp_second-secret-0123456789"
		p := providertest.New(t, func(c *providertest.Config) { c.Token = first })
		reg := p.Registration("vm-sp", "vm")
		reg.CallToken = first
		answers := []*apitest.Response{s.Do(t, "POST", "/api/v1/providers", reg).Want(t, http.StatusCreated)}

		// The provider refuses a call without its token (401), which would
		// answer 503: a 202 means Steward presented it.
		e := env{s, p}
		e.create(t, "with-token")

		// The provider restarts on a new token; Steward still holds the old.
		// Its health answers whoever asks (a front that serves it), so the
		// provider stays healthy and the create reaches it and gets 401.
		restarted := providertest.New(t, func(c *providertest.Config) { c.Token = second })
		target, err := url.Parse(restarted.URL())
		if err != nil {
			t.Fatal(err)
		}
		proxy := httputil.NewSingleHostReverseProxy(target)
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/v1/health" {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"status":"healthy"}`))
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(front.Close)
		moved := reg
		moved.Endpoint = front.URL
		answers = append(answers, s.Do(t, "POST", "/api/v1/providers", moved).Want(t, http.StatusOK))
		s.Do(t, "POST", "/api/v1/service-type-instances?id=refused-token", map[string]any{
			"provider_name": "vm-sp", "spec": vmSpec("refused-token"),
		}).WantProblem(t, http.StatusServiceUnavailable, "PROVIDER_UNAVAILABLE")
		s.Do(t, "GET", "/api/v1/service-type-instances/refused-token", nil).Want(t, http.StatusNotFound)

		moved.CallToken = second
		answers = append(answers, s.Do(t, "POST", "/api/v1/providers", moved).Want(t, http.StatusOK))
		e.p = restarted
		poll.Until(t, "the provider is healthy", func() bool { return e.providerStatus(t) == "healthy" })
		e.create(t, "after-registration")

		answers = append(answers, s.Do(t, "GET", "/api/v1/providers/vm-sp", nil).Want(t, http.StatusOK),
			s.Do(t, "GET", "/api/v1/providers", nil).Want(t, http.StatusOK),
			s.Do(t, "GET", "/api/v1/audit-events?max_page_size=1000", nil).Want(t, http.StatusOK))
		for _, a := range answers {
			for _, secret := range []string{first, second} {
				if strings.Contains(string(a.Body), secret) {
					t.Errorf("an answer shows a call token: %s", a.Body)
				}
			}
		}
		for _, secret := range []string{first, second} {
			if strings.Contains(logs.String(), secret) {
				t.Errorf("the server's log shows call token %q", secret)
			}
		}
	})
}
