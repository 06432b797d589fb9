package server_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
)

// The in-process provider runs only the commands it was told it may (the
// dev catalog's by default): even an admin's instance naming another is
// refused by the provider (its 400, answered as PROVIDER_ERROR), and
// nothing runs. Outside --dev it runs no processes at all.
func TestProcessProvider_RunsOnlyAllowedCommands(t *testing.T) {
	t.Parallel()
	if _, err := server.New(server.Config{ProcessProvider: true}); err == nil {
		t.Fatal("a server outside --dev accepted an in-process provider that runs processes")
	}
	if _, err := server.New(server.Config{ProcessProvider: true, ProcessProviderNoOp: true}); err != nil {
		t.Fatalf("a no-op in-process provider outside --dev: %v", err)
	}

	s := apitest.Start(t, store.SQLite, func(c *server.Config) { c.ProcessProvider = true })
	select {
	case <-s.ProcessProvider().Registered():
	case <-deadline(t):
		t.Fatal("the in-process provider never registered")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	s.Do(t, "POST", "/api/v1/service-type-instances?id=shell", map[string]any{
		"provider_name": "process-sp",
		"spec": map[string]any{"service_type": "container",
			"process": map[string]any{"command": []string{"/bin/sh", "-c", "touch " + marker}}},
	}).WantProblem(t, http.StatusBadRequest, "PROVIDER_ERROR")
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused command ran: %v", err)
	}
	// The dev catalog's own command runs.
	s.Do(t, "POST", "/api/v1/catalog-item-instances?id=sleeper-1", map[string]any{"catalog_item_id": "sleeper"}).
		Want(t, http.StatusCreated)
}
