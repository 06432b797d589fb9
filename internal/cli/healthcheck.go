package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/ctl"
)

func newHealthcheckCmd(stdout io.Writer) *cobra.Command {
	var serverURL string
	var timeout time.Duration
	var live bool
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 when a server is ready (its /readyz answers 200)",
		Long: "Ask a server whether it is ready (GET /readyz) and exit 0 when it answers 200,\n" +
			"1 otherwise, printing why: for images without curl (a container's HEALTHCHECK).\n" +
			"With --live it asks /livez instead: whether the process serves at all.\n\n" +
			"  steward healthcheck --server http://127.0.0.1:8080",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{ctl.EnvFlags: "server"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := "/readyz"
			if live {
				path = "/livez"
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			url := strings.TrimSuffix(serverURL, "/") + path
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return &ctl.UsageError{Msg: fmt.Sprintf("--server: %v", err)}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("%s: %w", url, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s answered %d: %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
			}
			fmt.Fprintf(stdout, "%s: %s\n", url, strings.TrimSpace(string(body)))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&serverURL, "server", ctl.DefaultServer, "the server's base URL")
	f.DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	f.BoolVar(&live, "live", false, "ask /livez (the process serves) instead of /readyz (it should get requests)")
	return cmd
}
