package console_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/poll"
)

// BenchmarkConsole_10kOrders measures the console of a real steward binary
// (SQLite, the in-process provider accepting orders without processes)
// holding 10,000 orders. Sub-benchmark server fetches the orders page's
// first page as a signed-in browser would (client-side latency on
// loopback), p50 and p99; chromium loads the same page in headless
// Chromium, navigation to DOM interactive, and weighs what it loads;
// idle-streams-200 takes the server's CPU (share of one core) over 20 s
// idle without streams, then with 200 open live streams, and the Go heap
// and stacks the streams added. Commands:
//
//	go test -run '^$' -bench 'BenchmarkConsole_10kOrders/(server|chromium)' -benchtime 200x ./internal/console
//	go test -run '^$' -bench 'BenchmarkConsole_10kOrders/idle' -benchtime 1x ./internal/console
//
// The chromium half needs STEWARD_TEST_AXE, as scripts/test sets it, or it
// skips.
func BenchmarkConsole_10kOrders(b *testing.B) {
	srv := realSteward(b, "--process-provider-noop")
	started := time.Now()
	createOrders(b, srv, 10_000)
	b.Logf("10,000 orders created in %s", time.Since(started).Round(time.Millisecond))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	session := consoleSession(b, srv.base, srv.admin)
	get := func(path string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, srv.base+path, nil)
		req.AddCookie(&http.Cookie{Name: "steward_session", Value: session})
		return client.Do(req)
	}

	b.Run("server", func(b *testing.B) {
		var took []time.Duration
		size := 0
		for b.Loop() {
			t0 := time.Now()
			resp, err := get("/ui/orders")
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			took = append(took, time.Since(t0))
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `<tr>`) {
				b.Fatalf("orders page: %d", resp.StatusCode)
			}
			size = len(body)
		}
		slices.Sort(took)
		b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
		b.ReportMetric(ms(took[len(took)*99/100]), "p99-ms")
		b.ReportMetric(float64(size), "html-bytes")
	})

	b.Run("chromium", func(b *testing.B) {
		chromium, axe := needBrowser(b)
		tb := openChromium(b, chromium, srv.base, axe)
		tb.do("sign in", chromedp.Navigate(srv.base+"/ui/signin"), chromedp.WaitVisible("#token"))
		tb.follow("sign in", chromedp.SendKeys("#token", srv.admin+"\r"))
		var interactive []time.Duration
		weight := 0.0
		for b.Loop() {
			tb.follow("open the orders page", chromedp.Navigate(srv.base+"/ui/orders"))
			interactive = append(interactive, time.Duration(eval[float64](tb,
				`performance.getEntriesByType("navigation")[0].domInteractive`)*float64(time.Millisecond)))
			weight = eval[float64](tb, `performance.getEntriesByType("navigation")[0].decodedBodySize + `+
				`performance.getEntriesByType("resource").reduce((n, r) => n + r.decodedBodySize, 0)`)
		}
		slices.Sort(interactive)
		b.ReportMetric(ms(interactive[len(interactive)/2]), "interactive-p50-ms")
		b.ReportMetric(weight, "page-bytes")
	})

	b.Run("idle-streams-200", func(b *testing.B) {
		for b.Loop() {
			// The server idle without streams, then with 200: the
			// difference is the streams' cost.
			const window = 20 * time.Second
			cpuIdle := cpuShare(b, srv.pid, window)
			memIdle := goMemory(b, get)
			ctx, cancel := context.WithCancel(context.Background())
			var open atomic.Int32
			var wg sync.WaitGroup
			for range 200 {
				wg.Go(func() {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.base+"/ui/events", nil)
					req.AddCookie(&http.Cookie{Name: "steward_session", Value: session})
					resp, err := client.Do(req)
					if err != nil {
						return
					}
					defer resp.Body.Close()
					sc := bufio.NewScanner(resp.Body)
					if sc.Scan() && strings.HasPrefix(sc.Text(), "retry:") {
						open.Add(1)
					}
					for sc.Scan() { // until cancelled
					}
				})
			}
			poll.UntilWithin(b, 30*time.Second, "200 streams open", func() bool { return open.Load() == 200 })
			cpuStreams := cpuShare(b, srv.pid, window)
			memStreams := goMemory(b, get)
			cancel()
			wg.Wait()
			b.ReportMetric(cpuIdle, "idle-cpu-%")
			b.ReportMetric(cpuStreams, "streams-cpu-%")
			b.ReportMetric(float64(memStreams-memIdle)/(1<<20), "streams-MB")
		}
	})
}

// cpuShare is the share of one core (%) the process used over window.
func cpuShare(b *testing.B, pid int, window time.Duration) float64 {
	cpu0, t0 := cpuTicks(b, pid), time.Now()
	wait := time.NewTimer(window)
	<-wait.C
	cpu1, t1 := cpuTicks(b, pid), time.Now()
	const ticksPerSecond = 100 // USER_HZ on Linux
	return float64(cpu1-cpu0) / ticksPerSecond / t1.Sub(t0).Seconds() * 100
}

// goMemory is the server's Go heap and stacks in use, from its /metrics.
func goMemory(b *testing.B, get func(string) (*http.Response, error)) int64 {
	resp, err := get("/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var total int64
	for line := range strings.Lines(string(body)) {
		for _, name := range []string{"go_memstats_heap_inuse_bytes ", "go_memstats_stack_inuse_bytes "} {
			if rest, ok := strings.CutPrefix(line, name); ok {
				v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
				total += int64(v)
			}
		}
	}
	if total == 0 {
		b.Fatalf("no Go memory figures in /metrics (%d)", resp.StatusCode)
	}
	return total
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// createOrders orders n sleepers through the API, 16 at a time.
// consoleSession signs in to the console at base with token, through its
// form, and returns the session cookie's value.
func consoleSession(t testing.TB, base, token string) string {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(base + "/ui/signin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	u, _ := url.Parse(base + "/ui/")
	form := url.Values{"token": {token}}
	for _, ck := range jar.Cookies(u) {
		if ck.Name == "steward_csrf" {
			form.Set("csrf", ck.Value)
		}
	}
	if resp, err = c.PostForm(base+"/ui/signin", form); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == "steward_session" && ck.Value != "" {
			return ck.Value
		}
	}
	t.Fatalf("sign-in: %d, and no session cookie", resp.StatusCode)
	return ""
}

func createOrders(b *testing.B, srv steward, n int) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range 16 {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				if code := apiCall(b, srv.base, srv.admin, "POST", fmt.Sprintf("/api/v1/catalog-item-instances?id=bench-%05d", i),
					map[string]any{"catalog_item_id": "sleeper"}, nil); code != http.StatusCreated {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		b.Fatalf("%d of %d orders failed", failed.Load(), n)
	}
}

// cpuTicks is the process's user and system CPU time, in clock ticks.
func cpuTicks(b *testing.B, pid int) int64 {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) start at ")".
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime
}
