package cli_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/poll"
)

// sleeperItem is a catalog item of the built-in container type that the
// in-process provider runs, for servers without --dev (which seeds one).
const sleeperItem = `kind: catalog-items
id: sleeper
service_type: container
defaults:
  process: {command: [sleep], args: ["600"]}
`

// Issue 22, item 13: an admin names the project with --project (the
// Steward-Project header) and lists every project with -A, which puts a
// PROJECT column first; a project-bound token cannot list every project,
// and no route but the list of orders takes `*`.
func TestClient_ProjectAndAllProjects(t *testing.T) {
	t.Parallel()
	const token = "stw_cli-test-admin-token-projects-0123"
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	url := startedURL(t, "server", "--api-token", token, "--process-provider", "--process-provider-noop", "--data-dir", data, "--listen", "127.0.0.1:0")
	admin := newClient(t, url)
	admin.ok("config", "set-context", "admin", "--server", url, "--token", token)
	admin.applyText(sleeperItem)

	admin.ok("order", "sleeper", "--id", "in-default")
	admin.ok("order", "sleeper", "--id", "in-team-a", "--project", "team-a")

	if rows := table(admin.ok("get", "orders")); len(rows) != 2 || rows[1][0] != "in-default" {
		t.Errorf("get orders (the default project): %q", rows)
	}
	if rows := table(admin.ok("get", "orders", "--project", "team-a")); len(rows) != 2 || rows[1][0] != "in-team-a" {
		t.Errorf("get orders --project team-a: %q", rows)
	}
	if out := admin.ok("get", "order", "in-team-a", "--project", "team-a", "-o", "name"); out != "catalog-item-instances/in-team-a\n" {
		t.Errorf("get order in-team-a --project team-a: %q", out)
	}
	rows := table(admin.ok("get", "orders", "-A"))
	if len(rows) != 3 || rows[0][0] != "PROJECT" || rows[0][1] != "ID" {
		t.Fatalf("get orders -A: %q", rows)
	}
	got := map[string]string{}
	for _, r := range rows[1:] {
		got[r[1]] = r[0]
	}
	if got["in-default"] != "default" || got["in-team-a"] != "team-a" {
		t.Errorf("get orders -A: projects %v", got)
	}
	if rows := table(admin.ok("get", "orders", "--all-projects", "-o", "wide")); strings.Count(strings.Join(rows[0], " "), "PROJECT") != 1 {
		t.Errorf("-A -o wide shows PROJECT more than once: %q", rows[0])
	}
	for _, args := range [][]string{{"get", "policies", "-A"}, {"get", "orders", "-A", "--project", "x"},
		{"get", "order", "in-default", "-A"}, {"get", "orders", "--project", "*"}} {
		if code, _, stderr := admin.run(args...); code != 2 {
			t.Errorf("steward %s: exit %d, want 2\n%s", strings.Join(args, " "), code, stderr)
		}
	}

	// A project admin of team-a: its own project only.
	bin := stewardBinary(t)
	code, userToken, stderr := runSteward(t, bin, "token", "create", "--data-dir", data,
		"--name", "bob", "--role", "project_admin", "--project", "team-a")
	if code != 0 {
		t.Fatalf("token create: exit %d\n%s", code, stderr)
	}
	userToken = strings.TrimSpace(userToken)
	if code, _, stderr := admin.run("get", "orders", "-A", "--token", userToken); code != 1 || !strings.Contains(stderr, "(403 PERMISSION_DENIED)") {
		t.Errorf("get orders -A as a project admin: exit %d\n%s", code, stderr)
	}
	if rows := table(admin.ok("get", "orders", "--token", userToken)); len(rows) != 2 || rows[1][0] != "in-team-a" {
		t.Errorf("get orders as team-a's project admin: %q", rows)
	}

	// Issue 22, item 15: the offline path (the database, directly) and the
	// API path of token create both leave a token.create record naming it.
	if code, out, stderr := admin.run("token", "create", "--name", "carol", "--role", "user", "--project", "team-a"); code != 0 ||
		!strings.HasPrefix(out, "stw_") {
		t.Fatalf("token create through the API: exit %d %q\n%s", code, out, stderr)
	}
	var toks []map[string]any
	if err := json.Unmarshal([]byte(admin.ok("get", "tokens", "-o", "json")), &toks); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, tk := range toks {
		ids[tk["name"].(string)] = tk["id"].(string)
	}
	var events []map[string]any
	if err := json.Unmarshal([]byte(admin.ok("get", "audit-events", "--filter", "action=token.create", "-o", "json")), &events); err != nil {
		t.Fatal(err)
	}
	actors := map[string]string{}
	for _, ev := range events {
		actors[ev["target"].(string)] = ev["actor"].(map[string]any)["id"].(string)
	}
	if ids["carol"] == "" || actors["token:"+ids["carol"]] != "admin" {
		t.Errorf("token create through the API: audit records %v, tokens %v", actors, ids)
	}
	if ids["bob"] == "" || !strings.HasPrefix(actors["token:"+ids["bob"]], "local:") {
		t.Errorf("token create in the database: audit records %v, tokens %v", actors, ids)
	}

	// Only the list of orders takes `*`.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/api/v1/service-type-instances", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Steward-Project", "*")
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rsp.Body.Close()
	if rsp.StatusCode != http.StatusBadRequest {
		t.Errorf("Steward-Project: * on the list of service-type instances: %d, want 400", rsp.StatusCode)
	}
}

// Issue 22, item 15: a provider reads its token from --token-file (not
// argv, which ps shows), and its help names STEWARD_TOKEN.
func TestProvider_TokenFile(t *testing.T) {
	t.Parallel()
	const token = "stw_cli-test-admin-token-tokenfile-01"
	dir := t.TempDir()
	url := startedURL(t, "server", "--api-token", token, "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0")
	admin := newClient(t, url)
	admin.ok("config", "set-context", "admin", "--server", url, "--token", token)
	secret := strings.TrimSpace(admin.ok("token", "create", "--name", "px", "--role", "service_account", "--provider", "process-x",
		"--service-type", "*"))
	file := filepath.Join(dir, "token")
	writeFile(t, file, secret+"\n")

	bin := stewardBinary(t)
	args := []string{"provider", "process", "--steward-url", url, "--token-file", file, "--name", "process-x",
		"--listen", "127.0.0.1:0", "--work-dir", filepath.Join(dir, "work"), "--allow-root"}
	cmd, log := startServer(t, bin, args...)
	poll.Until(t, "process-x registered with the token from the file", func() bool {
		code, out, _ := admin.run("get", "provider", "process-x", "-o", "name")
		return code == 0 && out == "providers/process-x\n"
	})
	stopServer(t, cmd)
	if strings.Contains(log.String(), secret) {
		t.Errorf("the provider logged its token")
	}

	code, _, stderr := runSteward(t, bin, "provider", "process", "--token-file", filepath.Join(dir, "missing"))
	if code == 0 || !strings.Contains(stderr, "--token-file") {
		t.Errorf("a missing --token-file: exit %d\n%s", code, stderr)
	}
	for _, help := range [][]string{{"provider", "process", "--help"}, {"adapter", "--help"}} {
		if _, out, _ := runSteward(t, bin, help...); !strings.Contains(out, "--token-file") || !strings.Contains(out, "STEWARD_TOKEN") {
			t.Errorf("steward %s names no --token-file or STEWARD_TOKEN:\n%s", strings.Join(help, " "), out)
		}
	}
	if _, out, _ := runSteward(t, bin, "server", "--help"); strings.Contains(out, "required without --dev") {
		t.Errorf("server --help still says --api-token is required without --dev")
	}
}
