package crashtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build compiles ./cmd/steward of the module at moduleDir into out, without
// -race: the server under test runs as it does in production.
func Build(ctx context.Context, moduleDir, out string) error {
	return goBuild(ctx, moduleDir, out, "./cmd/steward")
}

// BuildNATSServer compiles nats-server, at the version the module at
// moduleDir requires (it embeds the same server), into out: a cluster trial
// runs a NATS cluster of real processes it can kill.
func BuildNATSServer(ctx context.Context, moduleDir, out string) error {
	return goBuild(ctx, moduleDir, out, "github.com/nats-io/nats-server/v2")
}

func goBuild(ctx context.Context, moduleDir, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = moduleDir
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("crashtest: go build %s in %s: %w\n%s", pkg, moduleDir, err, output.String())
	}
	return nil
}

// ModuleDir returns the root of the module that dir is in, as `go env
// GOMOD` names it.
func ModuleDir(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOMOD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("crashtest: go env GOMOD in %s: %w", dir, err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == "/dev/null" {
		return "", errors.New("crashtest: " + dir + " is not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}
