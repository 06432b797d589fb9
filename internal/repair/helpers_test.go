package repair_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/poll"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// root is the static admin token of every test server here.
const root = "root-token"

// env is a server with authentication on, a provider that accepts repair
// operations ("k8s-sp"), a kubernetes service type "rke2" and a simple one
// "proc-app", each with a catalog item of the same name.
type env struct {
	s *apitest.Server
	p *providertest.Server
}

func setup(t *testing.T, engine store.Engine) env {
	t.Helper()
	s := apitest.Start(t, engine, apitest.Fast, func(c *server.Config) { c.Dev, c.APIToken = false, root })
	e := env{s: s, p: providertest.New(t, func(c *providertest.Config) { c.Repair = true })}
	e.as(t, root, "POST", "/api/v1/providers", e.p.Registration("k8s-sp", "rke2", "proc-app", "vm")).
		Want(t, http.StatusCreated)
	for id, kind := range map[string]string{"rke2": "kubernetes", "proc-app": "simple"} {
		e.as(t, root, "POST", "/api/v1/service-types?id="+id, map[string]any{
			"schema":  map[string]any{"type": "object"},
			"runtime": map[string]any{"kind": kind, "members": true},
		}).Want(t, http.StatusCreated)
		e.as(t, root, "POST", "/api/v1/catalog-items?id="+id, map[string]any{"service_type": id,
			"defaults": map[string]any{"name": id}}).Want(t, http.StatusCreated)
	}
	return e
}

// as sends a request with token (none when "") and extra headers.
func (e env) as(t *testing.T, token, method, path string, body any, headers ...string) *apitest.Response {
	t.Helper()
	if token != "" {
		headers = append(headers, "Authorization", "Bearer "+token)
	}
	return e.s.Do(t, method, path, body, headers...)
}

// token makes a token as root and returns its secret.
func (e env) token(t *testing.T, body map[string]any) string {
	t.Helper()
	var tok struct{ Token string }
	e.as(t, root, "POST", "/api/v1/tokens", body).Want(t, http.StatusCreated).JSON(t, &tok)
	return tok.Token
}

// appInstance is the API's view of an app instance.
type appInstance struct {
	ID           string
	InstanceID   string `json:"instance_id"`
	ProviderName string `json:"provider_name"`
	State        string
	Runtime      struct{ Kind string }
	RuntimeState *struct {
		provider.RuntimeState
		ObservedTime time.Time `json:"observed_time"`
	} `json:"runtime_state"`
	ActiveRepairOperationID *string  `json:"active_repair_operation_id"`
	SuggestedActions        []string `json:"suggested_actions"`
}

// operation is the API's view of a repair operation.
type operation struct {
	ID             string
	Path           string
	AppInstanceID  string `json:"app_instance_id"`
	Action, Scope  string
	TargetMemberID *string `json:"target_member_id"`
	Status, Phase  string
	Steps          []struct {
		Name, Status, Message string
		StartedAt             *time.Time `json:"started_at"`
		FinishedAt            *time.Time `json:"finished_at"`
	}
	Error *struct {
		Code, Message string
	}
	NextSafeAction string     `json:"next_safe_action"`
	IdempotencyKey string     `json:"idempotency_key"`
	RequestedBy    string     `json:"requested_by"`
	DeliverTime    *time.Time `json:"deliver_time"`
}

func appPath(id string) string { return "/api/v1/projects/default/app-instances/" + id }

// order orders item as id and waits until it is placed on the provider.
func (e env) order(t *testing.T, item, id string) appInstance {
	t.Helper()
	e.as(t, root, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{"catalog_item_id": item}).
		Want(t, http.StatusCreated)
	var app appInstance
	poll.Until(t, "app instance "+id+" placed", func() bool {
		e.as(t, root, "GET", appPath(id), nil).Want(t, http.StatusOK).JSON(t, &app)
		_, held := e.p.Instances()[app.InstanceID]
		return app.InstanceID != "" && held
	})
	return app
}

// runtime reports the app instance's runtime as root, observed now.
func (e env) runtime(t *testing.T, id string, st provider.RuntimeState) {
	t.Helper()
	e.as(t, root, "PUT", appPath(id)+"/runtime", provider.RuntimeReport{RuntimeState: st, ObservedTime: time.Now()}).
		Want(t, http.StatusOK)
}

// repair requests an operation as root and returns the answer.
func (e env) repair(t *testing.T, id string, body map[string]any, headers ...string) *apitest.Response {
	t.Helper()
	return e.as(t, root, "POST", appPath(id)+"/repair", body, headers...)
}

// started wants a 202 with an operation and returns it.
func started(t *testing.T, r *apitest.Response) operation {
	t.Helper()
	var op operation
	r.Want(t, http.StatusAccepted).JSON(t, &op)
	if loc := r.Header.Get("Location"); loc != "/api/v1/"+op.Path {
		t.Errorf("Location = %q, want /api/v1/%s", loc, op.Path)
	}
	return op
}

// finish reports op succeeded as root, freeing the app instance's slot.
func (e env) finish(t *testing.T, app string, op operation) {
	t.Helper()
	e.as(t, root, "POST", appPath(app)+"/repair-operations/"+op.ID+"/report", map[string]any{"status": "succeeded"}).
		Want(t, http.StatusOK)
}

// delivered waits until the provider received op and returns its request.
func (e env) delivered(t *testing.T, op operation) provider.RepairRequest {
	t.Helper()
	var req provider.RepairRequest
	poll.Until(t, "repair operation "+op.ID+" delivered", func() bool {
		for _, c := range e.p.Repairs() {
			if c.Repair != nil && c.Repair.OperationID == op.ID {
				req = *c.Repair
				return true
			}
		}
		return false
	})
	return req
}

func members(ms ...string) []provider.Member {
	out := make([]provider.Member, 0, len(ms)/2)
	for i := 0; i+1 < len(ms); i += 2 {
		out = append(out, provider.Member{ID: ms[i], Role: ms[i+1], Health: provider.RuntimeHealthy})
	}
	return out
}

func ptr[T any](v T) *T { return &v }
