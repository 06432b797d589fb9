package lifecycle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/lifecycle"
	"github.com/stewardhq/steward/internal/statemachine"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// devAuth lets every request in.
type devAuth struct{}

func (devAuth) Authenticate(context.Context, string) (auth.Principal, error) {
	return auth.Principal{Type: "user", ID: "alice", Role: auth.RoleAdmin}, nil
}

// problems is the slice of internal/server's table these routes answer with.
func problems() httpapi.Problems {
	isInvalid := func(err error) bool { var e *invalid.Error; return errors.As(err, &e) }
	return append(httpapi.BaseProblems(),
		httpapi.Mapping{Match: isInvalid, Status: http.StatusBadRequest, Reason: "INVALID_ARGUMENT", Title: "Invalid argument"},
		httpapi.Mapping{Err: store.ErrStale, Status: http.StatusPreconditionFailed, Reason: "PRECONDITION_FAILED", Title: "Precondition failed"},
		httpapi.Mapping{Err: lifecycle.ErrLifecycleNotFound, Status: http.StatusNotFound, Reason: "LIFECYCLE_NOT_FOUND", Title: "Lifecycle not found"},
		httpapi.Mapping{Err: lifecycle.ErrLifecycleReadOnly, Status: http.StatusConflict, Reason: "LIFECYCLE_READ_ONLY", Title: "Lifecycle is read-only"},
		httpapi.Mapping{Err: lifecycle.ErrLifecycleInUse, Status: http.StatusConflict, Reason: "LIFECYCLE_IN_USE", Title: "Lifecycle in use"},
	)
}

// usage is a fake catalog: the service types it says use each lifecycle.
type usage struct {
	mu    sync.Mutex
	types map[string][]string
	err   error
	asked []string
}

func (u *usage) ServiceTypesUsingLifecycle(_ context.Context, id string) ([]string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.asked = append(u.asked, id)
	return u.types[id], u.err
}

func (u *usage) set(id string, types []string, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.types, u.err = map[string][]string{id: types}, err
}

// The catalog is wired to Config.Usage by internal/server; here a fake
// stands in, behind the real HTTP stack.
func TestLifecycle_DeleteRefusedWhileServiceTypesUseIt(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		u := &usage{}
		logger := slog.New(slog.NewTextHandler(t.Output(), nil))
		svc := lifecycle.New(lifecycle.Config{DB: storetest.Open(t, engine), Usage: u, Logger: logger})
		api, err := httpapi.New(httpapi.Config{Logger: logger, Problems: problems(), Auth: devAuth{}})
		if err != nil {
			t.Fatal(err)
		}
		svc.Routes(api)
		srv := httptest.NewServer(api)
		t.Cleanup(srv.Close)
		do := func(method, path string, body any) (int, map[string]any) {
			t.Helper()
			var r io.Reader
			if body != nil {
				b, _ := json.Marshal(body)
				r = bytes.NewReader(b)
			}
			req, _ := http.NewRequest(method, srv.URL+path, r)
			req.Header.Set("Content-Type", "application/json")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&out)
			return resp.StatusCode, out
		}

		if status, body := do("POST", "/api/v1/lifecycles?id=approval", approval()); status != http.StatusCreated {
			t.Fatalf("create: %d %v", status, body)
		}
		u.set("approval", []string{"vm-gpu", "db"}, nil)
		status, body := do("DELETE", "/api/v1/lifecycles/approval", nil)
		want := map[string]any{"reason": "LIFECYCLE_IN_USE", "lifecycle_id": "approval", "service_types": []any{"db", "vm-gpu"}}
		got := map[string]any{"reason": body["reason"], "lifecycle_id": body["lifecycle_id"], "service_types": body["service_types"]}
		if diff := cmp.Diff(want, got); status != http.StatusConflict || diff != "" {
			t.Errorf("delete in use: %d; -want +got:\n%s", status, diff)
		}
		if status, _ := do("GET", "/api/v1/lifecycles/approval", nil); status != http.StatusOK {
			t.Errorf("a refused delete removed the lifecycle: GET %d", status)
		}

		u.set("approval", nil, errors.New("catalog down"))
		if status, body := do("DELETE", "/api/v1/lifecycles/approval", nil); status != http.StatusInternalServerError {
			t.Errorf("delete while the catalog fails: %d %v; want 500 (not a delete)", status, body)
		}

		u.set("approval", nil, nil)
		if status, body := do("DELETE", "/api/v1/lifecycles/approval", nil); status != http.StatusNoContent {
			t.Errorf("delete unused: %d %v", status, body)
		}
		if status, body := do("DELETE", "/api/v1/lifecycles/simple", nil); status != http.StatusConflict || body["reason"] != "LIFECYCLE_READ_ONLY" {
			t.Errorf("delete simple: %d %v", status, body)
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		if diff := cmp.Diff([]string{"approval", "approval", "approval"}, u.asked); diff != "" {
			t.Errorf("usage asked about: -want +got:\n%s", diff)
		}
	})
}

func TestService_LifecycleWrapsNotFound(t *testing.T) {
	t.Parallel()
	svc := lifecycle.New(lifecycle.Config{DB: storetest.Open(t, store.SQLite)})
	ctx := context.Background()
	if _, err := svc.Lifecycle(ctx, "nope"); !errors.Is(err, lifecycle.ErrLifecycleNotFound) {
		t.Errorf("Lifecycle(nope) error = %v, want ErrLifecycleNotFound", err)
	}
	l, err := svc.Lifecycle(ctx, statemachine.SimpleID)
	if err != nil || !l.Builtin {
		t.Fatalf("Lifecycle(simple) = %+v, %v", l, err)
	}
	created, err := svc.Create(ctx, lifecycle.CreateParams{ID: "mine", Source: statemachine.Source{Compact: json.RawMessage(approvalCompact)}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.Lifecycle(ctx, "mine")
	if err != nil || !cmp.Equal(created.Definition, got.Definition) || got.Version != 1 {
		t.Errorf("Lifecycle(mine) = %+v, %v; want the created one at version 1", got, err)
	}
	var inUse *lifecycle.InUseError
	svc = lifecycle.New(lifecycle.Config{DB: storetest.Open(t, store.SQLite),
		Usage: lifecycle.ServiceTypeUsageFunc(func(context.Context, string) ([]string, error) { return []string{"vm"}, nil })})
	if _, err := svc.Create(ctx, lifecycle.CreateParams{ID: "mine", Source: statemachine.Source{Compact: json.RawMessage(approvalCompact)}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, "mine", nil); !errors.As(err, &inUse) || !errors.Is(err, lifecycle.ErrLifecycleInUse) ||
		!cmp.Equal(inUse.ServiceTypes, []string{"vm"}) {
		t.Errorf("Delete(mine) = %v; want an InUseError naming vm", err)
	}
}
