package cli_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/crashtest"
	"github.com/stewardhq/steward/internal/poll"
)

// envRequireImage makes the image test fail, not skip, without buildah and
// podman (CI sets it).
const envRequireImage = "STEWARD_TEST_REQUIRE_IMAGE"

// Issue 28: scripts/image builds the image without a daemon into an OCI
// archive; podman (runc) loads it into storage of its own and runs it
// as the non-root user on a named volume; the server in it becomes ready,
// the image's own `steward healthcheck` says so (it has no curl), and
// `podman stop` (SIGTERM) ends it with status 0.
func TestImage_BuiltWithoutADaemonRunsAndIsReady(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"buildah", "podman"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv(envRequireImage) == "1" {
				t.Fatalf("%s not found and %s=1", tool, envRequireImage)
			}
			t.Skipf("%s not found (apt-get install buildah podman runc)", tool)
		}
	}
	// The static build may compile from nothing under the parallel -race
	// packages (CI compiles it first; a developer's run may not).
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	moduleDir, err := crashtest.ModuleDir(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	archive, tag := filepath.Join(dir, "steward.tar"), fmt.Sprintf("steward:test-%d", time.Now().UnixNano())
	build := exec.CommandContext(ctx, filepath.Join(moduleDir, "scripts/image"))
	build.Env = append(os.Environ(), "IMAGE_OUT="+archive, "IMAGE_TAG="+tag, "CONTAINERS_ROOT="+filepath.Join(dir, "buildah"))
	out, err := build.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/image: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))

	// podman's storage is not buildah's: the archive alone carries the image.
	// Its run root must be a short path (podman refuses over 50 characters).
	store, err := os.MkdirTemp("/tmp", "stw-pm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(store) })
	podman := func(args ...string) (string, error) {
		base := []string{"--storage-driver", "vfs", "--root", filepath.Join(store, "root"),
			"--runroot", filepath.Join(store, "run"), "--runtime", "runc"}
		out, err := exec.CommandContext(ctx, "podman", append(base, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	mustPodman := func(args ...string) string {
		t.Helper()
		out, err := podman(args...)
		if err != nil {
			t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	mustPodman("load", "--quiet", "-i", archive)
	if user := mustPodman("image", "inspect", "--format", "{{.Config.User}}", tag); user != "65532:65532" {
		t.Errorf("image user = %q, want 65532:65532 (not root)", user)
	}

	port, err := crashtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	name, volume := strings.ReplaceAll(tag, ":", "-"), strings.ReplaceAll(tag, ":", "-")+"-data"
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := podman("logs", name)
			t.Logf("container log:\n%s", logs)
		}
		_, _ = podman("rm", "-f", "-t", "0", name)
		_, _ = podman("volume", "rm", "-f", volume)
	})
	started := time.Now()
	// runc in this sandbox may not raise limits: the container gets low ones.
	mustPodman("run", "-d", "--name", name, "--network", "host", "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096",
		"-e", fmt.Sprintf("STEWARD_LISTEN=127.0.0.1:%d", port), "-v", volume+":/data", tag, "server", "--dev")
	poll.UntilWithin(t, time.Minute, "the server in the container is ready", func() bool {
		resp, err := http.Get(url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	t.Logf("cold start of the image to /readyz 200: %v", time.Since(started).Round(time.Millisecond))

	health := mustPodman("exec", name, "/usr/local/bin/steward", "healthcheck", "--server", url)
	if !regexp.MustCompile(`"status":"ok"`).MatchString(health) {
		t.Errorf("steward healthcheck in the container: %s", health)
	}
	mustPodman("stop", "-t", "20", name)
	if code := mustPodman("inspect", "--format", "{{.State.ExitCode}}", name); code != "0" {
		t.Errorf("after podman stop (SIGTERM), the container exited %s, want 0", code)
	}
}
