package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/bench"
)

// requestNumber, in a bench's path or body, is replaced by each request's
// number.
const requestNumber = "{n}"

func newBenchCmd(stdout io.Writer) *cobra.Command {
	var (
		cfg       bench.Config
		headers   []string
		body      string
		token     string
		asJSON    bool
		uniqueKey bool
		floorFor  time.Duration
		floorSize int
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Drive concurrent clients at an endpoint and report throughput and latency",
		Long: `Drive concurrent clients at one endpoint of a running Steward and print
throughput and p50/p95/p99 latency. Clients are closed-loop: each sends its next
request when the previous one answered. See BENCHMARKS.md for the recorded runs.

{n} in --path or --body is the request's number (0, 1, …, across clients):
one run creates orders with ids of its own and another deletes them.

Before the run it measures the floor for --floor-duration (see steward bench
floor) with as many clients, and prints the run's rate and median latency as
fractions of the floor's: 0.07 means 7% of what the bare HTTP stack does on
this machine today. --floor-duration 0 skips it.`,
		Example: `  steward bench --path /api/v1/health -c 16 -d 10s
  steward bench --method POST --path /api/v1/policies:evaluateRequest \
    --body '{"service_instance":{"spec":{"service_type":"container"}}}' -n 10000
  steward bench --method POST --path '/api/v1/catalog-item-instances?id=load-{n}' \
    --body '{"catalog_item_id":"sleeper"}' --unique-idempotency-key -n 1000
  steward bench --method DELETE --path '/api/v1/catalog-item-instances/load-{n}' -n 1000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Headers = map[string]string{}
			for _, h := range headers {
				k, v, ok := strings.Cut(h, ":")
				if !ok {
					return fmt.Errorf("--header %q: want Name: value", h)
				}
				cfg.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
			if token != "" {
				cfg.Headers["Authorization"] = "Bearer " + token
			}
			if body != "" {
				cfg.Body = []byte(body)
			}
			numbered := strings.Contains(cfg.Path, requestNumber) || strings.Contains(body, requestNumber)
			if uniqueKey || numbered {
				run := strconv.FormatInt(time.Now().UnixNano(), 36)
				cfg.RequestFunc = func(n int) (path string, b []byte, h http.Header) {
					if numbered {
						path = strings.ReplaceAll(cfg.Path, requestNumber, strconv.Itoa(n))
						b = []byte(strings.ReplaceAll(body, requestNumber, strconv.Itoa(n)))
					}
					if uniqueKey {
						h = http.Header{"Idempotency-Key": {run + "-" + strconv.Itoa(n)}}
					}
					return path, b, h
				}
			}
			var floor bench.Result
			if floorFor > 0 {
				fc := bench.Config{Concurrency: cfg.Concurrency, Duration: floorFor, Warmup: min(cfg.Warmup, time.Second)}
				var err error
				if floor, err = runFloor(cmd.Context(), fc, floorSize); err != nil {
					return err
				}
			}
			res, err := bench.Run(cmd.Context(), cfg)
			if err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			if floorFor > 0 {
				res.CompareToFloor(floor, floorSize)
			}
			return writeBenchResult(stdout, res, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.TargetURL, "url", "http://127.0.0.1:8080", "base URL of the server")
	f.StringVar(&cfg.Method, "method", "GET", "HTTP method")
	f.StringVar(&cfg.Path, "path", "/api/v1/health", "request path (with query)")
	f.StringVar(&body, "body", "", "request body (JSON)")
	f.StringArrayVar(&headers, "header", nil, "extra header, Name: value (repeatable)")
	f.StringVar(&token, "token", "", "bearer token")
	f.IntVarP(&cfg.Concurrency, "clients", "c", 16, "concurrent clients")
	f.DurationVarP(&cfg.Duration, "duration", "d", 10*time.Second, "how long to run")
	f.IntVarP(&cfg.Requests, "requests", "n", 0, "total requests (overrides --duration)")
	f.DurationVar(&cfg.Warmup, "warmup", time.Second, "unmeasured warm-up before the run")
	f.Float64Var(&cfg.Rate, "rate", 0, "open-loop: requests per second, whatever the answers take (--clients bounds those in flight; latency counts from when each was due); 0 is closed-loop")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	f.BoolVar(&uniqueKey, "unique-idempotency-key", false, "send a distinct Idempotency-Key with every request")
	f.DurationVar(&floorFor, "floor-duration", 3*time.Second, "measure the floor this long before the run and print the run as fractions of it; 0 skips it")
	f.IntVar(&cfg.ServerPID, "server-pid", 0, "the server's process id (on this machine, Linux): print the CPU it used over the run, per request")
	f.IntVar(&floorSize, "floor-body-size", bench.DefaultFloorBodySize, "bytes in the floor's fixed JSON answer")
	cmd.AddCommand(newBenchFloorCmd(stdout))
	return cmd
}
