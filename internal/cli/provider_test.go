package cli_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/poll"
)

// Issue 22, item 1: `steward provider process` takes --steward-url
// repeated, one per Steward replica, and registers with the next one when
// the first refuses connections.
func TestProviderProcess_TakesSeveralStewardURLs(t *testing.T) {
	t.Parallel()
	bin := stewardBinary(t)
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "http://" + down.Addr().String()
	if err := down.Close(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var registrations []string
	steward := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost && r.URL.Path == "/api/v1/providers" {
			mu.Lock()
			registrations = append(registrations, string(b))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":"p-1","name":"process-sp"}`)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer steward.Close()

	cmd, log := startServer(t, bin, "provider", "process", "--steward-url", downURL, "--steward-url", steward.URL,
		"--listen", "127.0.0.1:0", "--work-dir", t.TempDir(), "--allow-root")
	poll.Until(t, "the provider registered through the second URL", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(registrations) > 0
	})
	stopServer(t, cmd)
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(registrations[0], `"name":"process-sp"`) {
		t.Errorf("registration %s, want process-sp's", registrations[0])
	}
	if !strings.Contains(log.String(), steward.URL) || !strings.Contains(log.String(), downURL) {
		t.Errorf("the start log does not name both URLs:\n%s", log.String())
	}
}
