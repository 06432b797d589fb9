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
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/steward")
	cmd.Dir = moduleDir
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("crashtest: go build ./cmd/steward in %s: %w\n%s", moduleDir, err, output.String())
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
