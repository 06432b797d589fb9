package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/poll"
)

// The Chromium test needs Debian's chromium and axe-core's axe.min.js (npm);
// CI installs both and sets STEWARD_TEST_REQUIRE_BROWSER=1 so that the test
// fails rather than skips without them.
const (
	envChromium       = "STEWARD_TEST_CHROMIUM"        // the browser; default /usr/bin/chromium
	envAxe            = "STEWARD_TEST_AXE"             // axe.min.js
	envRequireBrowser = "STEWARD_TEST_REQUIRE_BROWSER" // fail, not skip, without them
	envScreenshots    = "STEWARD_TEST_SCREENSHOTS"     // where the pages' screenshots go
)

// needBrowser returns the browser's path and axe-core's source, or skips.
func needBrowser(t testing.TB) (chromium string, axe []byte) {
	t.Helper()
	missing := func(what string) {
		if os.Getenv(envRequireBrowser) != "" {
			t.Fatalf("%s (%s is set)", what, envRequireBrowser)
		}
		t.Skip(what)
	}
	chromium = os.Getenv(envChromium)
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing("no Chromium at " + chromium + " (apt install chromium, or set " + envChromium + ")")
	}
	path := os.Getenv(envAxe)
	if path == "" {
		missing(envAxe + " does not name axe-core's axe.min.js (scripts/test installs it with npm)")
	}
	axe, err := os.ReadFile(path)
	if err != nil {
		missing(err.Error())
	}
	return chromium, axe
}

// steward is a running steward server binary.
type steward struct {
	base, admin, user string // its URL, an admin's and a user's token
	pid               int
}

// realSteward builds cmd/steward and starts it with authentication on, the
// dev catalog, and the process provider: as its own process
// (`steward provider process`, real local processes), as a deployment
// outside --dev runs it, or in-process when args say --process-provider-noop.
func realSteward(t testing.TB, args ...string) steward {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "steward")
	build := exec.Command("go", "build", "-o", bin, "./cmd/steward")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/steward: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	token := func(name string, args ...string) string {
		out, err := exec.Command(bin, append([]string{"token", "create", "--data-dir", data, "--name", name}, args...)...).Output()
		if err != nil {
			t.Fatalf("steward token create %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	admin := token("browser-admin", "--role", "admin")
	user := token("browser-user", "--role", "user", "--project", "default")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	noop := slices.Contains(args, "--process-provider-noop")
	serverArgs := []string{"server", "--data-dir", data, "--listen", addr, "--dev-catalog"}
	if noop {
		serverArgs = append(serverArgs, "--process-provider")
	}
	srv := startLogged(t, "steward server", exec.Command(bin, append(serverArgs, args...)...))
	base := "http://" + addr
	if !noop {
		startProcessProvider(t, bin, base, filepath.Join(dir, "provider"),
			token("process-sp", "--role", "service_account", "--provider", "process-sp", "--service-type", "*"))
		// Runs before the server stops (cleanups run last first): the
		// provider's processes outlive the server, so the test's orders
		// are deleted and their processes gone before it stops.
		t.Cleanup(func() { deleteEveryOrder(t, base, admin) })
	}
	poll.Until(t, "the server's provider registers", func() bool {
		var providers struct {
			Results []struct {
				HealthStatus string `json:"health_status"`
			} `json:"results"`
		}
		return apiCall(t, base, admin, "GET", "/api/v1/providers", nil, &providers) == http.StatusOK &&
			len(providers.Results) > 0
	})
	return steward{base: base, admin: admin, user: user, pid: srv.Process.Pid}
}

// startProcessProvider runs `steward provider process` for the server at
// base with token, until the test ends.
func startProcessProvider(t testing.TB, bin, base, dir, token string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"provider", "process", "--steward-url", base, "--token-file", tokenFile, "--listen", "127.0.0.1:0",
		"--work-dir", filepath.Join(dir, "work"), "--allow-command", "*"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-root") // CI's machines run the tests as root
	}
	startLogged(t, "steward provider process", exec.Command(bin, args...))
}

// startLogged starts cmd and, at cleanup, interrupts it (killing it after
// 30 s) and, if the test failed, logs its output under name.
func startLogged(t testing.TB, name string, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	var log bytes.Buffer
	var logMu sync.Mutex
	cmd.Stdout = writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return log.Write(p) })
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("%s:\n%s", name, log.String())
			logMu.Unlock()
		}
	})
	return cmd
}

// deleteEveryOrder deletes the default project's orders and waits until
// the provider has removed every instance.
func deleteEveryOrder(t testing.TB, base, admin string) {
	type order struct {
		ID     string `json:"id"`
		State  string `json:"state"`
		Status string `json:"status"`
	}
	live := func() []order {
		var page struct {
			Results []order `json:"results"`
		}
		apiCall(t, base, admin, "GET", "/api/v1/catalog-item-instances?max_page_size=1000", nil, &page)
		return slices.DeleteFunc(page.Results, func(o order) bool { return o.State == "terminated" || o.Status == "DELETED" })
	}
	for _, o := range live() {
		apiCall(t, base, admin, "DELETE", "/api/v1/catalog-item-instances/"+o.ID, nil, nil)
	}
	// Every instance, a rehydration's old one included, is gone at the
	// provider.
	poll.UntilWithin(t, time.Minute, "every instance is removed at its provider", func() bool {
		var instances struct {
			Results []struct{ ID string } `json:"results"`
		}
		code := apiCall(t, base, admin, "GET", "/api/v1/service-type-instances", nil, &instances)
		return code == http.StatusOK && len(live()) == 0 && len(instances.Results) == 0
	})
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// apiCall calls the API with token and returns the status, decoding a 2xx
// body into out.
func apiCall(t testing.TB, base, token, method, path string, body, out any) int {
	t.Helper()
	var rd *bytes.Reader
	if body == nil {
		rd = bytes.NewReader(nil)
	} else {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0 // not up yet
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode/100 == 2 {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// tab is one Chromium tab driven by a test, with the dialogs it opened.
type tab struct {
	t       testing.TB
	ctx     context.Context
	base    string
	axe     string
	shots   string
	mu      sync.Mutex
	dialogs []string
}

func openChromium(t testing.TB, chromium, base string, axe []byte) *tab {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-background-networking", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	shots := os.Getenv(envScreenshots)
	if shots == "" {
		shots = filepath.Join(os.TempDir(), "steward-console-screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	tb := &tab{t: t, ctx: ctx, base: base, axe: string(axe), shots: shots}
	// Start the browser, then hear every dialog a page opens: none may.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	dialogs := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.dialogs = append(tb.dialogs, ev.Message)
			tb.mu.Unlock()
		}
	}()
	return tb
}

// do runs steps, failing the test with what names them.
func (tb *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// follow runs steps that load a page (a link, a form) and waits until it
// has loaded, whatever the page before showed.
func (tb *tab) follow(what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 90*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, steps...)
	if err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
	tb.t.Logf("%s: %d %s", what, resp.Status, resp.URL)
}

// until polls a JavaScript expression until it is true.
func (tb *tab) until(what, expr string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 90*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(80*time.Second))); err != nil {
		text, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.location.href + "\n" + document.querySelector("main").innerText`))
		tb.t.Fatalf("%s: %v; the page shows:\n%s", what, err, text)
	}
}

func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// mark sets a value on the page's window: it is gone if the page reloads.
func (tb *tab) mark() { eval[int](tb, "window.stewardTestMark = 1") }

func (tb *tab) notReloaded(what string) {
	tb.t.Helper()
	if eval[int](tb, "window.stewardTestMark || 0") != 1 {
		tb.t.Errorf("%s: the page was reloaded", what)
	}
}

// check saves the page's screenshot and runs axe-core on it: no serious or
// critical violation.
func (tb *tab) check(name string) {
	tb.t.Helper()
	shot, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Fatalf("screenshot of %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(tb.shots, name+".png"), shot, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	type violation struct {
		ID     string   `json:"id"`
		Impact string   `json:"impact"`
		Help   string   `json:"help"`
		Nodes  []string `json:"nodes"`
	}
	eval[any](tb, tb.axe+"\n;0")
	violations, err := chromedp.Run(tb.ctx, chromedp.Evaluate[[]violation](
		`axe.run(document).then(r => r.violations.map(v => ({id: v.id, impact: v.impact || "", help: v.help, `+
			`nodes: v.nodes.map(n => n.target.join(" "))})))`, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("axe-core on %s: %v", name, err)
	}
	for _, v := range violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			tb.t.Errorf("page %s: axe-core %s violation %s (%s) at %v", name, v.Impact, v.ID, v.Help, v.Nodes)
		}
	}
}

// tablesFit fails the test unless every table on the page is within the
// page's column, which ends where the page's header does, each of its rows
// as wide as its header row (issue 46, item 11: the lifecycle log's rows
// stopped short of the page's header, and a long value pushed a table
// past the page).
func (tb *tab) tablesFit(where string) {
	tb.t.Helper()
	misfits := eval[string](tb, `(() => {
		const main = document.querySelector("main"), box = main.getBoundingClientRect();
		const right = box.right - parseFloat(getComputedStyle(main).paddingRight) + 1;
		const out = [];
		if (document.documentElement.scrollWidth > window.innerWidth) out.push("the page scrolls sideways");
		const bar = document.querySelector("header .bar");
		const barRight = bar ? bar.getBoundingClientRect().right - parseFloat(getComputedStyle(bar).paddingRight) : -1;
		if (Math.abs(barRight - right + 1) > 1) out.push("the page's column ends at " + (right - 1) + ", its header at " + barRight);
		document.querySelectorAll("main table").forEach((t, i) => {
			const head = t.rows[0].getBoundingClientRect(), name = (t.className || "table " + i) + ": ";
			if (head.right > right) out.push(name + "ends at " + head.right + ", past the page at " + right);
			[...t.rows].forEach((r, j) => {
				const w = r.getBoundingClientRect().width;
				if (Math.abs(w - head.width) > 0.5) out.push(name + "row " + j + " is " + w + " wide, its header " + head.width);
			});
		});
		return out.join("; ");
	})()`)
	if misfits != "" {
		tb.t.Errorf("%s: %s", where, misfits)
	}
}

func (tb *tab) noDialogs() {
	tb.t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.dialogs) > 0 {
		tb.t.Errorf("pages opened dialogs: %q", tb.dialogs)
	}
}

// stateIs is a JavaScript test of the order page's state.
func stateIs(state string) string {
	return fmt.Sprintf(`(document.querySelector("#order-facts .state") || {}).textContent === %q`, state)
}

// Issue 25, in a real Chromium against the real binary: sign in with the
// keyboard, order sleeper from the generated form and watch it reach up
// without reloading; update a field; rehydrate; delete; see an order leave
// the orders page live; a policy's rejection shows its reason on the form;
// a display name made of HTML is text and opens no dialog. Every page is
// screenshotted and passes axe-core with no serious or critical violation.
func TestConsole_InChromium(t *testing.T) {
	chromium, axe := needBrowser(t)
	srv := realSteward(t)
	base, admin, user := srv.base, srv.admin, srv.user
	if code := apiCall(t, base, admin, "POST", "/api/v1/policies?id=no-never", map[string]any{
		"display_name": "no never", "policy_type": "GLOBAL", "priority": 10,
		"rego_code": "package nonever\nmain := {\"rejected\": true, \"rejection_reason\": \"processes must restart\"} if { input.spec.restart_policy == \"never\"; not input.spec.members }",
	}, nil); code != http.StatusCreated {
		t.Fatalf("create the policy: %d", code)
	}
	tb := openChromium(t, chromium, base, axe)

	tb.do("open the sign-in page", chromedp.Navigate(base+"/"), chromedp.WaitVisible("#token"))
	tb.check("signin")
	tb.follow("sign in with the keyboard", chromedp.Focus("#token"), chromedp.SendKeys("#token", admin+"\r"))
	tb.check("orders-empty")

	tb.do("open the catalog", chromedp.Navigate(base+"/ui/catalog"), chromedp.WaitVisible("ul.cards"))
	tb.check("catalog")
	tb.do("open sleeper's order form", chromedp.Navigate(base+"/ui/catalog/sleeper/order"), chromedp.WaitVisible("#f0-0"))
	tb.check("order-form")

	tb.follow("order sleeper", chromedp.SetValue("#order_id", "browser-web"), chromedp.SetValue("#display_name", "Web server"),
		chromedp.SetValue("#f0-0", "600"), chromedp.Click(`form.orderform button.primary`))
	tb.mark()
	tb.until("the order reaches up on its page", stateIs("up"))
	tb.notReloaded("the order reaching up")
	tb.tablesFit("the order page")
	tb.check("order-up")

	tb.follow("open the update form", chromedp.Click(`a.button[href*="/update?"]`))
	tb.check("update-form")
	tb.follow("update the restart policy", chromedp.SetValue("#f1", "always"), chromedp.Click(`form.orderform button.primary`))
	tb.mark()
	activeIs := func(path, value string) string {
		return fmt.Sprintf(`[...document.querySelectorAll("table.attributes tbody tr")].some(tr => `+
			`tr.cells[0].textContent.trim().startsWith(%q) && tr.cells[2].textContent.trim() === %q)`, path, value)
	}
	tb.until("the update becomes the active set", activeIs("restart_policy", `"always"`)+" && "+stateIs("up"))
	tb.notReloaded("the update")

	instance := func() string {
		return eval[string](tb, `(document.querySelector("#order-facts .id") || {}).textContent || ""`)
	}
	before := instance()
	// Rehydrate and Delete are asked for on a page of their own, without
	// script (no dialog opens: noDialogs below).
	tb.follow("ask for a rehydration", chromedp.Click(`a.button[href*="action=rehydrate"]`))
	tb.check("confirm-rehydrate")
	tb.follow("rehydrate", chromedp.Click(`form[action*="/rehydrate?"] button.primary`))
	tb.mark()
	tb.until("the order moves to a new instance", fmt.Sprintf(`(document.querySelector("#order-facts .id") || {}).textContent !== %q && `, before)+stateIs("up"))
	tb.notReloaded("the rehydration")
	if instance() == before {
		t.Errorf("after the rehydration the order still shows %s", before)
	}
	tb.until("the rehydration's log is on the page", `document.querySelector("table.lifecycle").textContent.includes("rehydrat")`)
	tb.tablesFit("the rehydrated order's page")

	tb.follow("ask for the deletion", chromedp.Click(`a.button[href*="action=delete"]`))
	tb.check("confirm-delete")
	tb.follow("delete", chromedp.Click(`form[action*="/delete?"] button.danger-fill`))
	tb.mark()
	tb.until("the order is terminated", stateIs("terminated"))
	tb.notReloaded("the deletion")

	// The orders page follows orders made and removed elsewhere.
	if code := apiCall(t, base, admin, "POST", "/api/v1/catalog-item-instances?id=leaver",
		map[string]any{"catalog_item_id": "sleeper"}, nil); code != http.StatusCreated {
		t.Fatalf("order leaver: %d", code)
	}
	tb.do("open the orders page", chromedp.Navigate(base+"/ui/orders"), chromedp.WaitVisible("table caption"))
	tb.mark()
	rowOf := func(id string) string {
		return fmt.Sprintf(`[...document.querySelectorAll("#orders-live tbody tr")].find(tr => tr.textContent.includes(%q))`, id)
	}
	tb.until("leaver is up on the orders page", rowOf("leaver")+`?.querySelector(".state")?.textContent === "up"`)
	tb.check("orders")
	if code := apiCall(t, base, admin, "DELETE", "/api/v1/catalog-item-instances/leaver", nil, nil); code != http.StatusAccepted {
		t.Fatalf("delete leaver: %d", code)
	}
	tb.until("leaver leaves the orders page", "!"+rowOf("leaver"))
	tb.notReloaded("an order leaving the orders page")

	// A display name made of HTML is text, on the list and on its page.
	const xss = `<img src=x onerror=alert(1)>`
	if code := apiCall(t, base, admin, "POST", "/api/v1/catalog-item-instances?id=xss",
		map[string]any{"catalog_item_id": "sleeper", "display_name": xss}, nil); code != http.StatusCreated {
		t.Fatalf("order xss: %d", code)
	}
	tb.until("the order named with HTML is listed", rowOf("xss")+" !== undefined")
	for _, where := range []string{"/ui/orders", "/ui/orders/xss"} {
		tb.do("open "+where, chromedp.Navigate(base+where), chromedp.WaitVisible("main h1"))
		if n := eval[int](tb, `document.querySelectorAll("main img").length`); n != 0 {
			t.Errorf("%s: the display name made %d img elements", where, n)
		}
		if !eval[bool](tb, fmt.Sprintf(`document.querySelector("main").textContent.includes(%q)`, xss)) {
			t.Errorf("%s: the display name is not shown as text", where)
		}
	}

	// A value longer than the page is wide wraps in its table, which stays
	// in the page.
	if code := apiCall(t, base, admin, "POST", "/api/v1/catalog-item-instances?id=long", map[string]any{"catalog_item_id": "sleeper",
		"user_values": []map[string]any{{"path": "process.args", "value": []string{"600", strings.Repeat("x", 300)}}}}, nil); code != http.StatusCreated {
		t.Fatalf("order long: %d", code)
	}
	tb.do("open long", chromedp.Navigate(base+"/ui/orders/long"), chromedp.WaitVisible("table.attributes"))
	tb.tablesFit("the page of an order with a long value")

	// An app instance: its runtime's members, and a repair of one member
	// asked for from its page, whose steps the page follows.
	if code := apiCall(t, base, admin, "POST", "/api/v1/catalog-item-instances?id=sc",
		map[string]any{"catalog_item_id": "sleeper-cluster"}, nil); code != http.StatusCreated {
		t.Fatalf("order sc: %d", code)
	}
	tb.do("open sc", chromedp.Navigate(base+"/ui/orders/sc"), chromedp.WaitVisible("main h1"))
	tb.mark()
	tb.until("sc's members are shown healthy", `document.querySelectorAll("option[value=agent-1]").length === 1 || `+
		`(document.querySelector("#order-live") || {}).textContent.includes("agent-1")`)
	tb.do("reload sc for its repair form", chromedp.Navigate(base+"/ui/orders/sc"), chromedp.WaitVisible("#repair_member"))
	tb.follow("repair agent-1", chromedp.SetValue("#repair_member", "agent-1"), chromedp.Click(`form.repair button`))
	tb.mark()
	tb.until("the repair's steps are all done on the page", `[...document.querySelectorAll("#order-live progress")].some(p => `+
		`p.max > 0 && p.value === p.max && p.closest("tr").textContent.includes("succeeded"))`)
	tb.notReloaded("the repair")
	tb.check("order-repaired")

	tb.do("order what a policy rejects", chromedp.Navigate(base+"/ui/catalog/sleeper/order"), chromedp.WaitVisible("#f1"),
		chromedp.SetValue("#f1", "never"))
	tb.follow("preview what a policy rejects", chromedp.Click(`form.orderform button[formaction$="/preview"]`))
	if msg := eval[string](tb, `(document.querySelector("section.preview") || {}).textContent || ""`); !strings.Contains(msg, "processes must restart") {
		t.Errorf("the preview says %q, want the policy's rejection", msg)
	}
	tb.check("order-preview")
	tb.follow("submit what a policy rejects", chromedp.Click(`form.orderform button.primary`))
	if msg := eval[string](tb, `document.querySelector('[role="alert"]').textContent`); !strings.Contains(msg, "processes must restart") {
		t.Errorf("the rejected form says %q, want the policy's reason", msg)
	}
	tb.check("order-rejected")

	// An object field is a group of controls (axe checks the fieldset).
	for _, call := range []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/service-types?id=sized", map[string]any{"schema": map[string]any{"type": "object", "properties": map[string]any{
			"resources": map[string]any{"type": "object", "properties": map[string]any{
				"replicas": map[string]any{"type": "integer", "minimum": 0}, "tier": map[string]any{"enum": []string{"small", "large"}}}}}}}},
		{"/api/v1/catalog-items?id=sized", map[string]any{"service_type": "sized",
			"fields": []map[string]any{{"path": "resources", "display_name": "Resources", "editable": true}}}},
	} {
		if code := apiCall(t, base, admin, "POST", call.path, call.body, nil); code != http.StatusCreated {
			t.Fatalf("POST %s: %d", call.path, code)
		}
	}
	tb.do("open an order form with an object field", chromedp.Navigate(base+"/ui/catalog/sized/order"), chromedp.WaitVisible("fieldset.object"))
	tb.check("order-form-object")

	for _, p := range []string{"providers", "operations", "audit", "policies", "tokens", "service-types", "service-types/vm/edit", "policies/new/edit"} {
		tb.do("open "+p, chromedp.Navigate(base+"/ui/"+p), chromedp.WaitVisible("main h1"))
		tb.check(strings.ReplaceAll(p, "/", "-"))
	}

	// A user's token: the audit log is the API's 403, shown as such.
	tb.follow("sign out", chromedp.Click(`form.signout button`))
	tb.follow("sign in as a user", chromedp.SendKeys("#token", user+"\r"))
	tb.do("open the policies as a user", chromedp.Navigate(base+"/ui/policies"), chromedp.WaitVisible("main h1"))
	if n := eval[int](tb, `document.querySelectorAll("main form").length`); n != 0 {
		t.Errorf("a user's policies page has %d forms, want no admin action", n)
	}
	tb.do("open the catalog as a user", chromedp.Navigate(base+"/ui/catalog"), chromedp.WaitVisible("main h1"))
	if eval[bool](tb, `document.querySelector('a[href="/ui/catalog/new/edit"]') !== null`) {
		t.Error("a user's catalog offers a new catalog item")
	}
	tb.do("open the audit log as a user", chromedp.Navigate(base+"/ui/audit"), chromedp.WaitVisible("main h1"))
	if msg := eval[string](tb, `document.querySelector("main").textContent`); !strings.Contains(msg, "FORBIDDEN") && !strings.Contains(msg, "PERMISSION") {
		t.Errorf("a user's audit page says %q, want the API's refusal", msg)
	}
	tb.check("audit-as-user")
	tb.noDialogs()
	t.Logf("screenshots in %s", tb.shots)
}
