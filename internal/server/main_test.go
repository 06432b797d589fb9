package server_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/stewardhq/steward/internal/kubetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, append(kubetest.LeakOptions(),
		// pgxpool's background health check and the process-wide NATS/otel
		// helpers outlive a test by design; they are not Steward's goroutines.
		goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"),
		// The adapter's end-to-end test shares one Kubernetes API server.
		goleak.Cleanup(func(code int) {
			kubetest.StopShared()
			os.Exit(code)
		}),
	)...)
}
