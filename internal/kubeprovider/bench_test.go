package kubeprovider_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/kubeprovider"
	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/providerhost"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// BenchmarkSteward_OrdersToUp: 200 orders of web-app (two replicas each)
// from 16 clients, through Steward on SQLite and the provider on the
// cluster with simulated nodes, from each POST until the order is up:
// orders up per second, and the median and slowest POST-to-up time.
//
//	go test -run '^$' -bench BenchmarkSteward_OrdersToUp -benchtime 1x ./internal/kubeprovider
func BenchmarkSteward_OrdersToUp(b *testing.B) {
	orders, clients := 200, 16
	if n, err := strconv.Atoi(os.Getenv("KUBEPROVIDER_BENCH_ORDERS")); err == nil {
		orders = n
	}
	c := kubetest.StartWithPods(b)
	for range b.N {
		s := apitest.Start(b, store.SQLite, func(c *server.Config) { c.ProcessProvider = true })
		startKubeProvider(b, s, c, kubeprovider.DaemonConfig{Settings: providerhost.Settings{Name: "kube-bench"},
			Provider: kubeprovider.Config{QPS: benchQPS()}, Logger: benchLogger()})
		prefix := fmt.Sprintf("b%d", time.Now().UnixNano()%1e9)
		posted := make([]time.Time, orders)
		upAt := make([]time.Time, orders)
		start := time.Now()
		var wg sync.WaitGroup
		for cl := range clients {
			wg.Go(func() {
				for i := cl; i < orders; i += clients {
					posted[i] = time.Now()
					s.Do(b, "POST", fmt.Sprintf("/api/v1/catalog-item-instances?id=%s-%d", prefix, i),
						map[string]any{"catalog_item_id": "web-app"}).Want(b, http.StatusCreated)
				}
			})
		}
		wg.Wait()
		b.Cleanup(func() {
			if b.Failed() {
				var page struct {
					Results []struct {
						ID, State, Status string
						LastError         string `json:"last_error"`
					} `json:"results"`
				}
				s.Do(b, "GET", "/api/v1/catalog-item-instances?max_page_size=1000", nil).JSON(b, &page)
				states := map[string]int{}
				for _, o := range page.Results {
					states[o.State+"/"+o.Status]++
					if o.State != "up" && states[o.State+"/"+o.Status] == 1 {
						b.Logf("order %s: %s %s %s", o.ID, o.State, o.Status, o.LastError)
					}
				}
				b.Logf("orders by state: %v", states)
			}
		})
		poll.UntilWithin(b, 5*time.Minute, "every order is up", func() bool {
			var page struct {
				Results []struct {
					ID    string `json:"id"`
					State string `json:"state"`
				} `json:"results"`
			}
			s.Do(b, "GET", "/api/v1/catalog-item-instances?state=up&max_page_size=1000", nil).Want(b, http.StatusOK).JSON(b, &page)
			now := time.Now()
			for _, o := range page.Results {
				var i int
				if _, err := fmt.Sscanf(o.ID, prefix+"-%d", &i); err == nil && upAt[i].IsZero() {
					upAt[i] = now
				}
			}
			return len(page.Results) >= orders
		})
		elapsed := time.Since(start)
		lat := make([]time.Duration, orders)
		for i := range orders {
			lat[i] = upAt[i].Sub(posted[i])
		}
		slices.Sort(lat)
		b.ReportMetric(float64(orders)/elapsed.Seconds(), "orders_up/s")
		b.ReportMetric(float64(lat[orders/2].Milliseconds()), "p50_ms")
		b.ReportMetric(float64(lat[orders-1].Milliseconds()), "max_ms")
	}
}

// BenchmarkProvider_IdleAPIRequests counts the requests the provider makes
// to the API server in a quiet minute's sixth (10 s) while it holds 10 and
// 1,000 apps (one replica each), all running: informers, not polling, so
// the figure should not grow with the apps (aim: flat, near zero).
//
//	go test -run '^$' -bench BenchmarkProvider_IdleAPIRequests -benchtime 1x ./internal/kubeprovider
func BenchmarkProvider_IdleAPIRequests(b *testing.B) {
	for _, apps := range []int{10, 1000} {
		b.Run(fmt.Sprintf("apps=%d", apps), func(b *testing.B) {
			c := kubetest.StartWithPods(b)
			for range b.N {
				var requests atomic.Int64
				rc := c.RESTConfig()
				rc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
					return roundTripFunc(func(r *http.Request) (*http.Response, error) {
						requests.Add(1)
						return rt.RoundTrip(r)
					})
				}
				r := newReports()
				p, err := kubeprovider.Open(b.Context(), kubeprovider.Config{REST: rc, Reporter: r, QPS: 500})
				if err != nil {
					b.Fatal(err)
				}
				ids := make([]string, apps)
				var wg sync.WaitGroup
				for cl := range 16 {
					wg.Go(func() {
						for i := cl; i < apps; i += 16 {
							ids[i] = uniqueID(b)
							spec := appSpec("nginx:1.27", 1)
							if _, err := p.Create(b.Context(), provider.CreateRequest{InstanceID: ids[i], ServiceType: kubeprovider.ServiceType,
								Spec: spec, Metadata: provider.CreateMetadata{OrderID: ids[i], Project: "default"}}); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				poll.UntilWithin(b, 10*time.Minute, "every app is reported running", func() bool {
					for _, id := range ids {
						if r.last(id).Status != provider.StatusRunning {
							return false
						}
					}
					return true
				})
				before := requests.Load()
				const quiet = 10 * time.Second
				<-time.After(quiet) // the measured idle window itself, not a wait for something to happen

				idle := requests.Load() - before
				b.ReportMetric(float64(idle)/quiet.Seconds(), "api_requests/s")
				// What the apps' creates cost, to show the count counts.
				b.ReportMetric(float64(before)/float64(apps), "requests/app_created")
				for _, id := range ids {
					if _, err := p.Delete(b.Context(), id); err != nil {
						b.Error(err)
					}
				}
				p.Close()
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// benchQPS is KUBEPROVIDER_BENCH_QPS, or 0 (the provider's default).
func benchQPS() float32 {
	q, _ := strconv.ParseFloat(os.Getenv("KUBEPROVIDER_BENCH_QPS"), 32)
	return float32(q)
}

// benchLogger logs to stderr with KUBEPROVIDER_TEST_LOG set, else nowhere.
func benchLogger() *slog.Logger {
	if os.Getenv("KUBEPROVIDER_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
