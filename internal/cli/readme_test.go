package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stewardhq/steward/internal/crashtest"
	"github.com/stewardhq/steward/internal/kubetest"
	"github.com/stewardhq/steward/internal/poll"
)

// readmeBlock returns the command lines of the README's ```sh block that
// follows the line naming test, with comments and blank lines dropped. The
// README names the test beside its block, so neither moves alone.
func readmeBlock(t *testing.T, moduleDir, test string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(moduleDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	marked, inBlock := false, false
	comment := regexp.MustCompile(`\s+#.*$`)
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		switch {
		case !marked:
			marked = strings.Contains(line, test)
		case !inBlock:
			inBlock = strings.HasPrefix(line, "```sh")
		case strings.HasPrefix(line, "```"):
			if len(lines) == 0 {
				t.Fatalf("README.md: the block after %s has no commands", test)
			}
			return lines
		default:
			if line = strings.TrimSpace(comment.ReplaceAllString(line, "")); line != "" {
				lines = append(lines, line)
			}
		}
	}
	t.Fatalf("README.md: no ```sh block after a line naming %s", test)
	return nil
}

// walkthroughStep is one README command line, split into words as sh would
// split it: the README keeps these lines free of quotes and expansions other
// than ~/, which the test checks.
type walkthroughStep struct {
	line string
	args []string
}

// walkthroughSteps splits lines into steps, each running one of programs.
func walkthroughSteps(t *testing.T, lines []string, programs ...string) []walkthroughStep {
	t.Helper()
	var steps []walkthroughStep
	for _, line := range lines {
		if strings.ContainsAny(line, "'\"$`&|;<>\\*?") {
			t.Fatalf("README.md: %q needs a shell; keep the walkthrough's lines plain words", line)
		}
		args := strings.Fields(line)
		if !slices.Contains(programs, args[0]) {
			t.Fatalf("README.md: %q runs %s; the test runs %s only", line, args[0], strings.Join(programs, ", "))
		}
		steps = append(steps, walkthroughStep{line: line, args: args})
	}
	return steps
}

var configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// Issue 22, item 19: the README's adapter walkthrough, run as it is written
// against the real binary and a real Kubernetes API server: the dev server
// with its NATS listening, the example adapter, an order of the dev
// catalog's namespaced-sleeper that is Ready once the adapter made its
// namespace, and a deletion that waits for the adapter's cleanup.
//
// What the test changes, and only in how the commands reach each other:
// `steward` is the binary built from this tree; HOME is a directory of the
// test's, whose ~/.kube/config is the test cluster's; the server's ports are
// 127.0.0.1:0 (the README's 127.0.0.1:4222 may be taken on a shared machine)
// and the others find them through STEWARD_SERVER and STEWARD_NATS_URL, as
// a user's environment could say; the sentinel runs faster.
func TestReadme_AdapterWalkthrough(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	moduleDir, err := crashtest.ModuleDir(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	steps := walkthroughSteps(t, readmeBlock(t, moduleDir, "TestReadme_AdapterWalkthrough"), "steward", "kubectl")
	cluster := kubetest.Start(t)
	bin := stewardBinary(t)

	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	kubeconfig, err := os.ReadFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".kube", "config"), kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "STEWARD_DATA_DIR=" + filepath.Join(dir, "data"), "STEWARD_LISTEN=127.0.0.1:0",
		"STEWARD_SENTINEL_INTERVAL=200ms", "STEWARD_SENTINEL_DEBOUNCE=1s"}
	for _, kv := range stewardEnv() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "XDG_") && name != "HOME" && name != "KUBECONFIG" && name != "NS_PREFIX" {
			env = append(env, kv)
		}
	}

	var sawServer, sawAdapter, sawOrder, sawDelete bool
	for _, st := range steps {
		args := append([]string{}, st.args...)
		for i, a := range args {
			if rest, ok := strings.CutPrefix(a, "~/"); ok {
				args[i] = filepath.Join(home, rest)
			}
		}
		if args[0] == "kubectl" {
			kubectl, err := exec.LookPath("kubectl")
			if err != nil {
				t.Logf("no kubectl here; not run: %s", st.line)
				continue
			}
			args[0] = kubectl
		} else {
			args[0] = bin
		}
		sub := ""
		if len(args) > 1 {
			sub = args[1]
		}
		switch {
		case st.args[0] == "steward" && sub == "server":
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "127.0.0.1:4222", "127.0.0.1:0")
			}
			url, natsURL := startWalkthroughServer(t, env, moduleDir, args)
			env = append(env, "STEWARD_SERVER="+url, "STEWARD_NATS_URL="+natsURL)
			sawServer = true
		case st.args[0] == "steward" && sub == "adapter":
			startBackground(t, env, moduleDir, args)
			sawAdapter = true
		default:
			stdout, stderr := runWalkthroughStep(t, env, moduleDir, st.line, args)
			switch {
			case st.args[0] == "steward" && sub == "order":
				if !strings.Contains(stderr, "Ready True") {
					t.Errorf("%s: no progress line reaching Ready True:\n%s", st.line, stderr)
				}
				if _, err := cluster.Dynamic().Resource(configMapGVR).Namespace("steward-ns1").
					Get(ctx, "order-values", metav1.GetOptions{}); err != nil {
					t.Errorf("after %s: the adapter's ConfigMap in namespace steward-ns1: %v", st.line, err)
				}
				sawOrder = true
			case st.args[0] == "steward" && sub == "describe":
				if !regexp.MustCompile(`(?m)^\s+cluster-namespace\s+\d+\s+\S+\s+True\s+True\b`).MatchString(stdout) {
					t.Errorf("%s shows no Available cluster-namespace status:\n%s", st.line, stdout)
				}
			case st.args[0] == "steward" && sub == "delete":
				sawDelete = true
			}
		}
	}
	if !sawServer || !sawAdapter || !sawOrder || !sawDelete {
		t.Fatalf("the walkthrough lacks a step (server %v, adapter %v, order %v, delete %v)", sawServer, sawAdapter, sawOrder, sawDelete)
	}
	poll.Until(t, "the adapter's namespace is gone", func() bool {
		_, err := cluster.Dynamic().Resource(kubetest.NamespaceGVR).Get(ctx, "steward-ns1", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	// The example retains a record of each order in namespace default.
	records := cluster.Dynamic().Resource(configMapGVR).Namespace("default")
	if _, err := records.Get(ctx, "steward-order-ns1", metav1.GetOptions{}); err != nil {
		t.Errorf("the retained record: %v", err)
	}
	_ = records.Delete(ctx, "steward-order-ns1", metav1.DeleteOptions{})
}

// runWalkthroughStep runs one foreground command to its end and wants exit 0.
func runWalkthroughStep(t *testing.T, env []string, dir, line string, args []string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env, cmd.Dir = env, dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", line, err, out.String(), errOut.String())
	}
	t.Logf("%s\n%s%s", line, out.String(), errOut.String())
	return out.String(), errOut.String()
}

// startBackground starts a long-running command (a terminal of its own in
// the README) and stops it with SIGTERM when the test ends.
func startBackground(t *testing.T, env []string, dir string, args []string) *syncBuffer {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env, cmd.Dir = env, dir
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Errorf("%s: %v", strings.Join(args[1:], " "), err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s:\n%s", strings.Join(args[1:], " "), log.String())
		}
	})
	return log
}

// startWalkthroughServer starts the README's server and returns its API and
// NATS URLs, read from its "steward started" log line.
func startWalkthroughServer(t *testing.T, env []string, dir string, args []string) (url, natsURL string) {
	t.Helper()
	log := startBackground(t, env, dir, args)
	re := regexp.MustCompile(`"msg":"steward started".*"url":"([^"]+)".*"nats_url":"([^"]+)"`)
	poll.Until(t, "the server started with its NATS listening", func() bool {
		m := re.FindStringSubmatch(log.String())
		if m != nil {
			url, natsURL = m[1], m[2]
		}
		return m != nil
	})
	return url, natsURL
}

// Issue 22, item 18: a removed order's id stays taken by its tombstone, so
// a README step that orders an id an earlier step deleted would answer
// 409 ORDER_EXISTS to a reader who follows the README from the top.
func TestReadme_NoStepOrdersAnIdAnEarlierStepDeleted(t *testing.T) {
	t.Parallel()
	moduleDir, err := crashtest.ModuleDir(context.Background(), ".")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(moduleDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	creates := []*regexp.Regexp{
		regexp.MustCompile(`steward order \S+ --id ([\w.-]+)`),
		regexp.MustCompile(`-X POST \S*catalog-item-instances\?id=([\w.-]+)`),
	}
	deletes := []*regexp.Regexp{
		regexp.MustCompile(`steward delete order ([\w.-]+)`),
		regexp.MustCompile(`-X DELETE \S*catalog-item-instances/([\w.-]+)`),
	}
	deleted := map[string]string{}
	inBlock, orders := false, 0
	for n, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock && strings.HasPrefix(line, "```sh")
			continue
		}
		if !inBlock {
			continue
		}
		for _, re := range creates {
			if m := re.FindStringSubmatch(line); m != nil {
				orders++
				if at, ok := deleted[m[1]]; ok {
					t.Errorf("README.md:%d orders %q, which README.md:%s deleted: its tombstone keeps the id (409 ORDER_EXISTS)",
						n+1, m[1], at)
				}
			}
		}
		for _, re := range deletes {
			if m := re.FindStringSubmatch(line); m != nil {
				deleted[m[1]] = strconv.Itoa(n + 1)
			}
		}
	}
	if orders < 2 || len(deleted) < 2 {
		t.Fatalf("found %d orders and %d deletions in README.md's sh blocks; the patterns no longer match it", orders, len(deleted))
	}
}
