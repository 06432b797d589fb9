package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/stewardhq/steward/internal/cli"
	"github.com/stewardhq/steward/internal/poll"
)

// client runs the client commands in this process against one server,
// with a config file of its own so that the user's is never read.
type client struct {
	t      *testing.T
	server string
	config string
}

func newClient(t *testing.T, server string) *client {
	return &client{t: t, server: server, config: filepath.Join(t.TempDir(), "config.yaml")}
}

// run runs `steward args…` and returns its exit code and output.
func (c *client) run(args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	return c.runStdin("", args...)
}

func (c *client) runStdin(stdin string, args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	var out, errOut bytes.Buffer
	flags := []string{"--config", c.config}
	if c.server != "" {
		flags = append(flags, "--server", c.server)
	}
	full := append(append([]string{}, args...), flags...)
	if args[0] == "__complete" { // the last word is the one completed
		last := len(args) - 1
		full = append(append(append([]string{}, args[:last]...), flags...), args[last])
	}
	code = cli.MainContext(c.t.Context(), full, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// ok runs a command that must succeed and returns its standard output.
func (c *client) ok(args ...string) string {
	c.t.Helper()
	code, stdout, stderr := c.run(args...)
	if code != 0 {
		c.t.Fatalf("steward %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// startedURL starts a server with args and returns its URL.
func startedURL(t *testing.T, args ...string) string {
	t.Helper()
	_, log := startServer(t, stewardBinary(t), args...)
	return servingURL(t, log)
}

// servingURL waits for a server's "steward started" log line and returns
// the URL it serves on.
func servingURL(t *testing.T, log *syncBuffer) string {
	t.Helper()
	re := regexp.MustCompile(`"msg":"steward started","url":"([^"]+)"`)
	var url string
	poll.Until(t, "the server started", func() bool {
		m := re.FindStringSubmatch(log.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})
	return url
}

// table splits a table's output into rows of cells.
func table(out string) [][]string {
	var rows [][]string
	for line := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		rows = append(rows, strings.Fields(line))
	}
	return rows
}

// Issue 13: the client against a real `steward server --dev`: order with
// --wait, get and describe in every output format, apply create then
// update, wait, delete --wait, completion from the server, and the exit
// codes and printed problem of errors.
func TestClient_AgainstDevServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url := startedURL(t, "server", "--dev", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0")
	c := newClient(t, url)

	t.Run("version names both sides", func(t *testing.T) {
		out := c.ok("version")
		if !regexp.MustCompile(`(?m)^Client: \S+\nServer: (devel|v)\S*$`).MatchString(out) {
			t.Fatalf("steward version:\n%s", out)
		}
	})

	t.Run("whoami says the dev admin and that the server runs open", func(t *testing.T) {
		if out := c.ok("whoami"); out != "user:dev, admin in project default (the server runs open: --dev)\n" {
			t.Fatalf("steward whoami: %q", out)
		}
		var who map[string]any
		if err := json.Unmarshal([]byte(c.ok("whoami", "-o", "json")), &who); err != nil || who["role"] != "admin" || who["open"] != true {
			t.Fatalf("steward whoami -o json: %v (%v)", who, err)
		}
	})

	t.Run("get lists the seeded catalog as a table", func(t *testing.T) {
		code, stdout, stderr := c.run("get", "items")
		if code != 0 {
			t.Fatalf("get items: exit %d: %s", code, stderr)
		}
		rows := table(stdout)
		if strings.Join(rows[0], " ") != "ID SERVICE TYPE PROVIDERS DISPLAY NAME AGE" {
			t.Fatalf("header %q", rows[0])
		}
		// Issue 46, item 4: an item no healthy provider serves says so,
		// with what starts one (the in-process provider serves sleeper).
		providers := map[string]string{}
		for _, r := range rows[1:] {
			providers[r[0]] = r[1] + " " + r[2] + " " + r[3]
		}
		if providers["sleeper"] != "container 1 healthy" || providers["web-app"] != "container-app none healthy" {
			t.Fatalf("items' providers %q, want sleeper served by one healthy provider and web-app by none", providers)
		}
		if !strings.Contains(stderr, "no healthy provider serves web-app (container-app)") ||
			!strings.Contains(stderr, "start one: steward provider kubernetes") {
			t.Fatalf("get items' note on stderr: %q; want web-app named with the command that starts its provider", stderr)
		}
	})

	t.Run("an order of an unknown item names it and the items there are", func(t *testing.T) {
		code, _, stderr := c.run("order", "sleepr")
		if code != 1 || !strings.Contains(stderr, `no catalog item "sleepr" (did you mean sleeper?); the catalog items are `) ||
			!strings.Contains(stderr, "sleeper-cluster") {
			t.Errorf("order sleepr: exit %d\n%s", code, stderr)
		}
	})

	code, stdout, stderr := c.run("order", "sleeper", "--id", "hello", "--set", `process.args=["600"]`, "--wait", "-o", "json")
	if code != 0 {
		t.Fatalf("order --wait: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var order map[string]any
	if err := json.Unmarshal([]byte(stdout), &order); err != nil || order["state"] != "up" {
		t.Fatalf("order --wait -o json printed state %v (%v):\n%s", order["state"], err, stdout)
	}
	if !strings.Contains(stderr, "catalog-item-instances/hello: state up, Ready True") {
		t.Errorf("order --wait printed no progress line reaching up:\n%s", stderr)
	}
	if args, _ := json.Marshal(order["user_values"]); string(args) != `[{"path":"process.args","value":["600"]}]` {
		t.Errorf("--set process.args=[\"600\"] sent user_values %s", args)
	}

	t.Run("get one in each output format", func(t *testing.T) {
		rows := table(c.ok("get", "order", "hello"))
		want := [][]string{{"ID", "CATALOG", "ITEM", "STATE", "READY", "HEALTH", "PROVIDER", "AGE"},
			{"hello", "sleeper", "up", "True", "<none>", "process-sp"}}
		if len(rows) != 2 || strings.Join(rows[0], " ") != strings.Join(want[0], " ") ||
			strings.Join(rows[1][:6], " ") != strings.Join(want[1], " ") {
			t.Errorf("table: %q, want %q and an age", rows, want)
		}
		if wide := c.ok("get", "orders", "-o", "wide"); !strings.Contains(wide, "INSTANCE") || !strings.Contains(wide, "container") {
			t.Errorf("-o wide has no INSTANCE column or service type:\n%s", wide)
		}
		var asJSON, asYAML map[string]any
		if err := json.Unmarshal([]byte(c.ok("get", "order", "hello", "-o", "json")), &asJSON); err != nil || asJSON["id"] != "hello" {
			t.Errorf("-o json: %v %v", asJSON["id"], err)
		}
		if err := yaml.Unmarshal([]byte(c.ok("get", "order", "hello", "-o", "yaml")), &asYAML); err != nil || asYAML["state"] != "up" {
			t.Errorf("-o yaml: %v %v", asYAML["state"], err)
		}
		if got := c.ok("get", "cii", "hello", "-o", "name"); got != "catalog-item-instances/hello\n" {
			t.Errorf("-o name: %q", got)
		}
		var list []map[string]any
		if err := json.Unmarshal([]byte(c.ok("get", "orders", "-o", "json")), &list); err != nil || len(list) != 1 {
			t.Errorf("list -o json: %d results, %v", len(list), err)
		}
	})

	t.Run("describe shows members and the lifecycle log", func(t *testing.T) {
		out := c.ok("describe", "order", "hello")
		// The provider's report is in the log, saying who told what.
		for _, want := range []string{"Catalog Item Id:  sleeper", "State:", "Events:", "TRIGGER", "creating       up",
			"DETAIL", "report"} {
			if !strings.Contains(out, want) {
				t.Errorf("describe has no %q:\n%s", want, out)
			}
		}
		// The report may land before the create's answer is recorded (the
		// answer then records nothing), so it changed PENDING or the
		// answer's PROVISIONING.
		// Its message, the status message now, is shown once, above.
		report := regexp.MustCompile(`process-sp: restart_count <none> -> 0; status (PENDING|PROVISIONING) -> RUNNING; ` +
			`status_message (starting)? -> \(see Status Message\)`)
		if !report.MatchString(out) || !regexp.MustCompile(`(?m)^Status Message: +running as pid \d+$`).MatchString(out) {
			t.Errorf("describe has no report from process-sp to RUNNING, its message in Status Message:\n%s", out)
		}
	})

	// Issue 46: a failed process says why (its stderr), and describe says
	// it once.
	t.Run("describe of a failed order shows its reason once", func(t *testing.T) {
		code, _, stderr := c.run("order", "sleeper", "--id", "broken", "--set", `process.args=["notanumber"]`,
			"--set", "restart_policy=never", "--wait")
		const reason = "stderr: sleep: invalid time interval"
		if code != 1 || !strings.Contains(stderr, reason) {
			t.Fatalf("order --wait of a failing process: exit %d, want 1 saying %q:\n%s", code, reason, stderr)
		}
		out := c.ok("describe", "order", "broken")
		if n := strings.Count(out, "invalid time interval"); n != 1 ||
			!regexp.MustCompile(`(?m)^Status Message: +process exited with status 1; restart_policy never; `+reason).MatchString(out) {
			t.Errorf("describe shows the reason %d times, want once, in Status Message:\n%s", n, out)
		}
		c.ok("delete", "order", "broken", "--wait")
	})

	t.Run("API errors exit 1 with the problem; usage errors exit 2", func(t *testing.T) {
		code, _, stderr := c.run("order", "sleeper", "--set", "process.argz=1")
		if code != 1 || !strings.Contains(stderr, "(400 INVALID_ARGUMENT)") ||
			!strings.Contains(stderr, "  - process.argz: is not an editable field of catalog item sleeper\n    user_values[0].path\n") {
			t.Errorf("order with an unknown field: exit %d\n%s", code, stderr)
		}
		// Issue 46, item 14: a bad value is named as the item names it, in
		// words; where it is in the request and the pattern come second.
		code, _, stderr = c.run("order", "web-app", "--set", "replicas=99", "--set", "image=Not An Image")
		if want := "steward: Invalid argument (400 INVALID_ARGUMENT)\n" +
			"  - image (Image): does not have the form this field takes: The container image, as a registry reference " +
			"(nginx:1.27, registry.example.com/team/app@sha256:…): lowercase but for the tag, no spaces.\n" +
			"    user_values[1].value; pattern ^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(…\n" +
			"  - replicas (Replicas): must be at most 50\n" +
			"    user_values[0].value\n"; code != 1 || stderr != want {
			t.Errorf("order with bad values: exit %d\n%s\nwant:\n%s", code, stderr, want)
		}
		code, _, stderr = c.run("order", "sleeper", "--set", "restart_policy=sometimes") // README's
		if want := "steward: Invalid argument (400 INVALID_ARGUMENT)\n" +
			"  - restart_policy (Restart policy): must be one of \"always\", \"on_failure\", \"never\"\n" +
			"    user_values[0].value\n"; code != 1 || stderr != want {
			t.Errorf("order with a value off the enum: exit %d\n%s\nwant:\n%s", code, stderr, want)
		}
		code, _, stderr = c.run("get", "order", "nope")
		if code != 1 || !strings.Contains(stderr, "404 ") {
			t.Errorf("get of a missing order: exit %d\n%s", code, stderr)
		}
		for _, args := range [][]string{{"get", "ordrs"}, {"get"}, {"get", "orders", "--bogus"}, {"frobnicate"},
			{"get", "orders", "-o", "xml"}, {"order"}, {"wait", "order", "hello", "--for", "=x"},
			{"get", "order", ".."}, {"delete", "order", "."}, {"set-state", "..", "up"}} {
			if code, _, stderr := c.run(args...); code != 2 || !strings.HasPrefix(stderr, "steward: ") {
				t.Errorf("steward %s: exit %d, want 2\n%s", strings.Join(args, " "), code, stderr)
			}
		}
	})

	t.Run("apply creates, then updates, then leaves alone", func(t *testing.T) {
		policy := `kind: policies
id: cap
display_name: Cap
policy_type: GLOBAL
priority: 10
label_selector: {service_type: vm}
rego_code: |
  package cap
  main := {"rejected": false}
`
		if out := c.applyText(policy); out != "policies/cap created\n" {
			t.Fatalf("first apply: %q", out)
		}
		if out := c.applyText(strings.Replace(policy, "priority: 10", "priority: 20", 1)); out != "policies/cap configured\n" {
			t.Fatalf("changed apply: %q", out)
		}
		if out := c.applyText(strings.Replace(policy, "priority: 10", "priority: 20", 1)); out != "policies/cap unchanged\n" {
			t.Fatalf("same apply: %q", out)
		}
		// What get -o yaml prints applies as it is, its etag as If-Match.
		current := c.ok("get", "policy", "cap", "-o", "yaml")
		if out := c.applyText(strings.Replace(current, "priority: 20", "priority: 30", 1)); out != "policies/cap configured\n" {
			t.Fatalf("apply of get -o yaml: %q", out)
		}
		code, _, stderr := c.runStdin(strings.Replace(current, "priority: 20", "priority: 40", 1), "apply", "-f", "-")
		if code != 1 || !strings.Contains(stderr, "412 PRECONDITION_FAILED") {
			t.Errorf("apply with a stale etag: exit %d\n%s", code, stderr)
		}
		code, _, stderr = c.runStdin(strings.Replace(policy, "GLOBAL", "USER", 1), "apply", "-f", "-")
		if code != 1 || !strings.Contains(stderr, "policy_type is fixed at creation") {
			t.Errorf("apply changing a create-only member: exit %d\n%s", code, stderr)
		}
		code, _, stderr = c.runStdin(policy+"colour: red\n", "apply", "-f", "-")
		if code != 1 || !strings.Contains(stderr, "colour") {
			t.Errorf("apply with an unknown member: exit %d\n%s", code, stderr)
		}
		if rows := table(c.ok("get", "policy", "cap")); rows[1][2] != "30" {
			t.Errorf("priority after apply: %q", rows)
		}
	})

	t.Run("policy test runs drafts without storing them", func(t *testing.T) {
		dir := t.TempDir()
		req := filepath.Join(dir, "req.yaml")
		rego := filepath.Join(dir, "cap.rego") // stands in for the stored policy cap
		writeFile(t, req, "service_type: container\nprocess: {command: [sleep], args: [\"1\"]}\n")
		writeFile(t, rego, "package cap\n\nmain := {\"rejected\": true, \"rejection_reason\": \"no sleeping\"} if input.spec.process.command[0] == \"sleep\"\n")
		var decision map[string]any
		if err := yaml.Unmarshal([]byte(c.ok("policy", "test", "--request", req)), &decision); err != nil ||
			decision["status"] != "APPROVED" || decision["selected_provider"] != "process-sp" {
			t.Errorf("policy test without drafts: %v (%v)", decision, err)
		}
		code, _, stderr := c.run("policy", "test", "--request", req, "-f", rego, "--selector", "service_type=container")
		if code != 1 || !strings.Contains(stderr, "(406 POLICY_REJECTED)") || !strings.Contains(stderr, "rejection_reason: no sleeping") ||
			!strings.Contains(stderr, "policy_id: cap") {
			t.Errorf("policy test with a rejecting draft: exit %d\n%s", code, stderr)
		}
		if rows := table(c.ok("get", "policies")); len(rows) != 2 || rows[1][0] != "cap" {
			t.Errorf("policy test stored something: %q", rows)
		}
	})

	t.Run("wait", func(t *testing.T) {
		if code, _, stderr := c.run("wait", "order", "hello", "--for", "state=up"); code != 0 {
			t.Errorf("wait --for state=up: exit %d\n%s", code, stderr)
		}
		code, _, stderr := c.run("wait", "order", "hello", "--for", "condition=Ready=False", "--timeout", "1s")
		if code != 1 || !strings.Contains(stderr, "timed out after") {
			t.Errorf("wait for what does not come: exit %d\n%s", code, stderr)
		}
	})

	t.Run("get --watch prints a line when an order appears and when it changes", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		out := &syncBuffer{}
		done := make(chan int, 1)
		go func() {
			done <- cli.MainContext(ctx, []string{"get", "orders", "--watch", "--interval", "100ms", "--server", url, "--config", c.config},
				strings.NewReader(""), out, io.Discard)
		}()
		poll.Until(t, "the first table", func() bool { return strings.Contains(out.String(), "hello ") })
		c.ok("order", "sleeper", "--id", "watched", "--set", `process.args=["600"]`)
		poll.Until(t, "a row of the new order reaching up", func() bool {
			return regexp.MustCompile(`(?m)^watched\s+sleeper\s+up\s+True`).MatchString(out.String())
		})
		c.ok("delete", "order", "watched", "--wait")
		poll.Until(t, "a row of the removed order, terminated", func() bool {
			return regexp.MustCompile(`(?m)^watched\s+sleeper\s+terminated`).MatchString(out.String())
		})
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("get --watch ended with exit %d when interrupted, want 0", code)
		}
		checkColumns(t, out.String(), []string{"ID", "CATALOG ITEM", "STATE", "READY", "HEALTH", "PROVIDER", "AGE"})
	})

	t.Run("completion offers ids from the server", func(t *testing.T) {
		out := c.ok("__complete", "get", "orders", "")
		if !strings.Contains(out, "hello\t") {
			t.Errorf("completion of order ids:\n%s", out)
		}
		out = c.ok("__complete", "describe", "pol")
		if !strings.Contains(out, "policies\n") {
			t.Errorf("completion of kinds:\n%s", out)
		}
	})

	t.Run("rehydrate --wait follows the Operation", func(t *testing.T) {
		rows := table(c.ok("rehydrate", "hello", "--wait"))
		if len(rows) != 2 || rows[1][1] != "rehydrate" || rows[1][3] != "true" || rows[1][4] != "<none>" {
			t.Errorf("rehydrate --wait: %q", rows)
		}
	})

	t.Run("delete --wait returns once the order is gone", func(t *testing.T) {
		if out := c.ok("delete", "order", "hello", "--wait"); out != "catalog-item-instances/hello deleted\n" {
			t.Fatalf("delete --wait: %q", out)
		}
		rows := table(c.ok("get", "order", "hello"))
		if rows[1][2] != "terminated" {
			t.Errorf("after delete --wait: %q", rows)
		}
	})
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (c *client) applyText(doc string) string {
	c.t.Helper()
	code, stdout, stderr := c.runStdin(doc, "apply", "-f", "-")
	if code != 0 {
		c.t.Fatalf("apply: exit %d\n%s\n%s", code, stdout, stderr)
	}
	return stdout
}

// Issue 13: against a server that needs a token, the client sends the one
// from --token, STEWARD_TOKEN or the config file's context, and without
// one prints the 401 and exits 1.
func TestClient_TokenFromFlagEnvOrContext(t *testing.T) {
	t.Parallel()
	const token = "stw_cli-test-admin-token-0123456789"
	dir := t.TempDir()
	url := startedURL(t, "server", "--api-token", token, "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0")
	c := newClient(t, url)

	code, _, stderr := c.run("get", "policies")
	if code != 1 || !strings.Contains(stderr, "401 ") {
		t.Errorf("without a token: exit %d\n%s", code, stderr)
	}
	if rows := table(c.ok("get", "policies", "--token", token)); len(rows) != 1 || rows[0][0] != "ID" {
		t.Errorf("with --token: %q", rows)
	}

	// Draft policies are arbitrary Rego run on the server: only an admin,
	// who may store policies, may send them; a user gets the 403.
	bin := stewardBinary(t)
	code, userToken, stderr := runSteward(t, bin, "token", "create", "--data-dir", filepath.Join(dir, "data"),
		"--name", "alice", "--role", "user", "--project", "team-a")
	if code != 0 {
		t.Fatalf("token create: exit %d\n%s", code, stderr)
	}
	req, rego := filepath.Join(dir, "req.yaml"), filepath.Join(dir, "draft.rego")
	writeFile(t, req, "service_type: vm\n")
	writeFile(t, rego, "package draft\n\nmain := {}\n")
	args := []string{"policy", "test", "--request", req, "-f", rego}
	if code, _, stderr := c.run(append(args, "--token", strings.TrimSpace(userToken))...); code != 1 || !strings.Contains(stderr, "(403 ") {
		t.Errorf("policy test with a draft as a user: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := c.run(append(args, "--token", token)...); code != 0 {
		t.Errorf("policy test with a draft as an admin: exit %d\n%s", code, stderr)
	}

	// The binary, with STEWARD_SERVER and STEWARD_TOKEN in its environment.
	cmdEnv := append(stewardEnv(), "STEWARD_SERVER="+url, "STEWARD_TOKEN="+token, "STEWARD_CONFIG="+c.config)
	code, stdout, stderr := runStewardEnv(t, bin, cmdEnv, "get", "providers", "-o", "json")
	if code != 0 || strings.TrimSpace(stdout) != "[]" {
		t.Errorf("binary with STEWARD_SERVER/STEWARD_TOKEN: exit %d %q\n%s", code, stdout, stderr)
	}
	// A STEWARD_* variable that is not a connection flag is not read: an
	// exported STEWARD_OUTPUT (or STEWARD_ID, STEWARD_SET) changes nothing.
	code, _, stderr = runStewardEnv(t, bin, append(cmdEnv, "STEWARD_OUTPUT=bogus"), "get", "providers")
	if code != 0 {
		t.Errorf("STEWARD_OUTPUT was read as -o: exit %d\n%s", code, stderr)
	}

	// A context of the config file.
	noServer := &client{t: t, config: c.config}
	noServer.ok("config", "set-context", "local", "--server", url, "--token", token)
	if out := noServer.ok("config", "current-context"); out != "local\n" {
		t.Errorf("current-context after the first set-context: %q", out)
	}
	if rows := table(noServer.ok("get", "policies")); len(rows) != 1 {
		t.Errorf("through the context: %q", rows)
	}
	noServer.ok("config", "set-context", "elsewhere", "--server", "http://127.0.0.1:1")
	noServer.ok("config", "use-context", "elsewhere")
	if code, _, stderr := noServer.run("get", "policies"); code != 1 || !strings.Contains(stderr, "cannot reach the Steward server at http://127.0.0.1:1") {
		t.Errorf("a context whose server is down: exit %d\n%s", code, stderr)
	}
	if code, _, _ := noServer.run("get", "policies", "--context", "local"); code != 0 {
		t.Errorf("--context local: exit %d", code)
	}
	if code, _, _ := noServer.run("config", "use-context", "missing"); code != 2 {
		t.Errorf("use-context of a missing context: exit %d, want 2", code)
	}
	if info, err := os.Stat(c.config); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the config file holds tokens: mode %v (%v), want 0600", info.Mode().Perm(), err)
	}
	contexts := noServer.ok("config", "get-contexts")
	rows := table(contexts)
	if strings.Contains(contexts, token) || len(rows) != 3 || strings.Join(rows[2], " ") != "* elsewhere http://127.0.0.1:1 <none>" ||
		strings.Join(rows[1], " ") != "local "+url+" <set>" {
		t.Errorf("get-contexts shows the token or not which is current:\n%s", contexts)
	}
}
