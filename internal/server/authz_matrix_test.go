package server_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// matrixFile is the table of who may do what (docs/security.md points to it).
const matrixFile = "testdata/authz-matrix.txt"

// matrixPrincipals are the table's columns, in its order.
var matrixPrincipals = []string{"anonymous", "admin", "project_admin", "user", "provider", "adapter", "worker"}

// projectBound are the principals whose token fixes their project.
var projectBound = map[string]bool{"project_admin": true, "user": true}

// side is the column half of a cell: the principal's own project, or
// another.
type side int

const (
	own side = iota
	other
)

func (s side) String() string { return [...]string{"own", "other"}[s] }

// matrixRow is a row of the table.
type matrixRow struct {
	line         int
	method, path string
	// otherIs is the row's OTHER column: team-b, same or public.
	otherIs string
	// cells are the expected classes by principal, own and other.
	cells map[string][2]string
}

func (r matrixRow) route() string { return r.method + " " + r.path }

// matrixClasses are the classes a cell may hold (the table's header says
// what each means).
var matrixClasses = map[string]func(status int) bool{
	"200": func(s int) bool { return s == 200 },
	"201": func(s int) bool { return s == 201 },
	"202": func(s int) bool { return s == 202 },
	"204": func(s int) bool { return s == 204 },
	"401": func(s int) bool { return s == 401 },
	"403": func(s int) bool { return s == 403 },
	"404": func(s int) bool { return s == 404 },
	"no":  func(s int) bool { return s == 403 || s == 404 },
	"ok": func(s int) bool {
		return s >= 200 && s < 300 || slices.Contains([]int{400, 406, 409, 412, 422}, s)
	},
	// mine also wants the rows listed to be the caller's (otherRows).
	"mine": func(s int) bool { return s == 200 },
}

// otherRows names the rows of a list answer that are not the provider's
// (its instances carry its name as provider_name): "" when there are none.
func otherRows(t *testing.T, body []byte, provider string) string {
	var page struct {
		Results []struct {
			ID           string `json:"id"`
			ProviderName string `json:"provider_name"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatalf("decode a list: %v: %s", err, body)
	}
	var others []string
	for _, r := range page.Results {
		if r.ProviderName != provider {
			others = append(others, r.ID+" of "+cmp.Or(r.ProviderName, "no provider"))
		}
	}
	if len(others) == 0 {
		return ""
	}
	return "lists " + strings.Join(others, ", ")
}

// readMatrix parses the table, failing t on any row it cannot read.
func readMatrix(t *testing.T) []matrixRow {
	t.Helper()
	f, err := os.Open(matrixFile)
	if err != nil {
		t.Fatalf("open the matrix: %v", err)
	}
	defer f.Close()
	var rows []matrixRow
	var columns []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) > 2 && fields[0] == "#" && fields[1] == "METHOD" {
			columns = fields[4:]
			continue
		}
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if !slices.Equal(columns, matrixPrincipals) {
			t.Fatalf("%s:%d: the header line (# METHOD PATH OTHER ...) names the principals %q, want %q before the first row",
				matrixFile, n, columns, matrixPrincipals)
		}
		if len(fields) != 3+len(columns) {
			t.Errorf("%s:%d: %d fields, want METHOD PATH OTHER and a cell for each of %q", matrixFile, n, len(fields), columns)
			continue
		}
		row := matrixRow{line: n, method: fields[0], path: fields[1], otherIs: fields[2], cells: map[string][2]string{}}
		if !slices.Contains([]string{"team-b", "same", "public"}, row.otherIs) {
			t.Errorf("%s:%d: OTHER is %q, want team-b, same or public", matrixFile, n, row.otherIs)
		}
		for i, cell := range fields[3:] {
			o, ot, two := strings.Cut(cell, "/")
			if !two {
				ot = o
			}
			for _, c := range []string{o, ot} {
				switch {
				case matrixClasses[c] == nil:
					t.Errorf("%s:%d: %s's cell %q: unknown class %q", matrixFile, n, columns[i], cell, c)
				case c == "mine" && columns[i] != "provider":
					t.Errorf("%s:%d: %s's cell %q: mine is for the provider's lists only", matrixFile, n, columns[i], cell)
				}
			}
			row.cells[columns[i]] = [2]string{o, ot}
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read the matrix: %v", err)
	}
	return rows
}

// matrixFixtures are the objects the rows' requests name, per project
// (own: team-a, other: team-b).
type matrixFixtures struct {
	project, order, doomed, instance, repair, operation, token, provider [2]string
	// registration is each provider's registration, as a provider sends it.
	registration [2]any
	// scratch is a taken instance id (of an instance of team-a deleted
	// deferred); task is the cleanup task that deletion left.
	scratch, task string
	// tokens are the principals' secrets ("" for anonymous).
	tokens map[string]string
}

var matrixParam = regexp.MustCompile(`\{[a-z_]+\}`)

// param is the value of a route's path parameter for side s.
func (f *matrixFixtures) param(t *testing.T, route, name string, s side) string {
	switch name {
	case "project_id":
		return f.project[s]
	case "catalog_item_instance_id", "app_instance_id":
		if strings.HasSuffix(route, ":rehydrate") && strings.Contains(route, "catalog-item-instances") {
			// An order being deleted refuses a rehydration (409): the
			// order web-a keeps its instance for the rows after.
			return f.doomed[s]
		}
		return f.order[s]
	case "instance_id":
		return f.instance[s]
	case "repair_operation_id":
		return f.repair[s]
	case "operation_id":
		return f.operation[s]
	case "token_id":
		return f.token[s]
	case "provider_id":
		return f.provider[s]
	case "cleanup_task_id":
		return f.task
	case "service_type_id", "catalog_item_id":
		return "matrix-a"
	case "policy_id":
		return "matrix-policy"
	case "lifecycle_id":
		return "simple" // built in: read-only, never deleted
	case "adapter":
		return "matrix-adapter"
	}
	t.Fatalf("%s: no fixture for the path parameter {%s}: add one to matrixFixtures.param", route, name)
	return ""
}

// matrixRequest is what a row sends besides its path.
type matrixRequest struct {
	// body, when not nil, is the JSON body for side s.
	body func(f *matrixFixtures, s side) any
	// staleIfMatch sends an If-Match no version has: the write passes
	// authorization and tenancy, then changes nothing (412).
	staleIfMatch bool
}

// invalidBody is refused by every closed request body (400, after
// authorization): the write changes nothing.
var invalidBody = func(*matrixFixtures, side) any { return map[string]any{"not_a_member_of_any_body": true} }

func fixed(body any) func(*matrixFixtures, side) any {
	return func(*matrixFixtures, side) any { return body }
}

// longAgo is an observed_time older than any report kept: a report with it
// is discarded (204), or changes nothing.
const longAgo = "2001-01-01T00:00:00Z"

// matrixRequests are the bodies and headers of the rows that need them.
// Every write that passes authorization must leave the fixtures as the rows
// after it need them.
var matrixRequests = map[string]matrixRequest{
	"POST /api/v1/tokens": {body: fixed(map[string]any{"name": "matrix-new", "role": "user", "project": "team-a"})},

	// A registration again changes nothing (200); a provider's token
	// registers only its own name (403 for sp-b's).
	"POST /api/v1/providers":                {body: func(f *matrixFixtures, s side) any { return f.registration[s] }},
	"PATCH /api/v1/providers/{provider_id}": {body: fixed(map[string]any{"metadata": map[string]string{"matrix": "patched"}})},
	// In use by its orders (409) and a stale If-Match (412): never deleted.
	"DELETE /api/v1/providers/{provider_id}": {staleIfMatch: true},

	"POST /api/v1/service-type-instances":                 {body: invalidBody},
	"DELETE /api/v1/service-type-instances/{instance_id}": {staleIfMatch: true},
	"PUT /api/v1/service-type-instances/{instance_id}/status": {staleIfMatch: true,
		body: fixed(map[string]any{"status": "RUNNING", "observed_time": longAgo})},

	"POST /api/v1/service-types":                     {body: invalidBody},
	"PUT /api/v1/service-types/{service_type_id}":    {body: invalidBody},
	"DELETE /api/v1/service-types/{service_type_id}": {staleIfMatch: true},

	"POST /api/v1/catalog-items":                     {body: invalidBody},
	"PATCH /api/v1/catalog-items/{catalog_item_id}":  {body: invalidBody},
	"DELETE /api/v1/catalog-items/{catalog_item_id}": {staleIfMatch: true},

	"POST /api/v1/catalog-item-instances": {body: invalidBody},
	"PATCH /api/v1/catalog-item-instances/{catalog_item_instance_id}": {staleIfMatch: true,
		body: fixed(map[string]any{"labels": map[string]string{"matrix": "patched"}})},
	"DELETE /api/v1/catalog-item-instances/{catalog_item_instance_id}": {staleIfMatch: true},
	// web-a is not being deleted: 409 NOT_DELETING.
	"POST /api/v1/catalog-item-instances/{catalog_item_instance_id}:forceDelete": {
		body: fixed(map[string]any{"reason": "the authorization matrix"})},
	"POST /api/v1/catalog-item-instances/{catalog_item_instance_id}:setState": {
		body: fixed(map[string]any{"target_state": "up", "current_version": 999999})},
	// A generation ahead of the order's: discarded (204).
	"PUT /api/v1/catalog-item-instances/{catalog_item_instance_id}/adapter-statuses/{adapter}": {
		body: fixed(map[string]any{"observed_generation": 999999, "observed_time": longAgo, "conditions": []map[string]any{
			{"type": "Applied", "status": "True"}, {"type": "Available", "status": "True"}, {"type": "Health", "status": "True"}}})},

	// The new id is taken (409).
	"POST /api/v1/resources/{instance_id}:rehydrate": {
		body: func(f *matrixFixtures, _ side) any { return map[string]any{"new_instance_id": f.scratch} }},

	"POST /api/v1/policies":                 {body: invalidBody},
	"PATCH /api/v1/policies/{policy_id}":    {body: invalidBody},
	"DELETE /api/v1/policies/{policy_id}":   {staleIfMatch: true},
	"POST /api/v1/policies:evaluateRequest": {body: fixed(map[string]any{"service_instance": map[string]any{"spec": map[string]any{"service_type": "matrix-a"}}})},
	"POST /api/v1alpha1/policies:evaluateRequest": {
		body: fixed(map[string]any{"service_instance": map[string]any{"spec": map[string]any{"service_type": "matrix-a"}}})},

	"POST /api/v1/lifecycles":                  {body: invalidBody},
	"PUT /api/v1/lifecycles/{lifecycle_id}":    {body: invalidBody},
	"DELETE /api/v1/lifecycles/{lifecycle_id}": {staleIfMatch: true},

	// Older than the report the fixtures made: discarded (204).
	"PUT /api/v1/projects/{project_id}/app-instances/{app_instance_id}/runtime": {
		body: fixed(map[string]any{"health": "healthy", "observed_time": longAgo})},
	// A repair is in progress on each app instance (409).
	"POST /api/v1/projects/{project_id}/app-instances/{app_instance_id}/repair": {
		body: fixed(map[string]any{"action": "reconcile", "scope": "whole_runtime"})},
	// running is where the worker's operation already is, or moves it
	// there: it stays unfinished.
	"POST /api/v1/projects/{project_id}/app-instances/{app_instance_id}/repair-operations/{repair_operation_id}/report": {
		body: fixed(map[string]any{"status": "running"})},
}

// sent is a request of the matrix, ready to go.
type sent struct {
	method, path string
	body         []byte
	header       map[string]string
}

// request builds the request of row for principal on side s.
func (f *matrixFixtures) request(t *testing.T, row matrixRow, principal string, s side) sent {
	route := row.route()
	r := sent{method: row.method, header: map[string]string{}}
	r.path = matrixParam.ReplaceAllStringFunc(row.path, func(p string) string {
		return f.param(t, route, strings.Trim(p, "{}"), s)
	})
	spec := matrixRequests[route]
	if spec.body != nil {
		b, err := json.Marshal(spec.body(f, s))
		if err != nil {
			t.Fatalf("%s: encode the body: %v", route, err)
		}
		r.body = b
	}
	if spec.staleIfMatch {
		r.header["If-Match"] = `"999999"`
	}
	if tok := f.tokens[principal]; tok != "" {
		r.header["Authorization"] = "Bearer " + tok
	}
	if !projectBound[principal] {
		r.header["Steward-Project"] = f.project[s]
	}
	return r
}

// matrixServer sends requests to a server in process.
type matrixServer struct {
	h  http.Handler
	db *store.DB
}

// send answers r's status, for a problem its reason, and the body.
func (m matrixServer) send(r sent) (int, string, []byte) {
	req := httptest.NewRequest(r.method, r.path, bytes.NewReader(r.body))
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	m.h.ServeHTTP(rec, req)
	var p struct{ Reason string }
	_ = json.Unmarshal(rec.Body.Bytes(), &p) // a problem, or any other answer
	return rec.Code, p.Reason, rec.Body.Bytes()
}

// do sends a fixture's request as token and wants status; it returns the
// answer's body.
func (m matrixServer) do(t *testing.T, token, method, path string, body any, want int, header ...string) []byte {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatalf("encode: %v", err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(b))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	m.h.ServeHTTP(rec, req)
	if rec.Code != want {
		t.Fatalf("fixture %s %s: %d, want %d: %s", method, path, rec.Code, want, rec.Body)
	}
	return rec.Body.Bytes()
}

// idOf is the "id" member of a JSON answer.
func idOf(t *testing.T, body []byte) string {
	t.Helper()
	var v struct{ ID string }
	if err := json.Unmarshal(body, &v); err != nil || v.ID == "" {
		t.Fatalf("no id in %s (%v)", body, err)
	}
	return v.ID
}

// startMatrix starts a server with authentication on and makes the
// fixtures: in team-a and team-b, an app instance (web-a, web-b) with a
// repair in progress, an order being deleted (old-a, old-b), an operation
// and a token; the providers sp-a and sp-b, each the only one of its
// service type (matrix-a, matrix-b); a policy, a cleanup task; and a token
// of each principal.
//
// observe, when not nil, is told of every statement the server runs once
// it has started.
func startMatrix(t *testing.T, engine store.Engine, observe store.StatementObserver) (matrixServer, *matrixFixtures) {
	t.Helper()
	const root = "matrix-root-token"
	s := apitest.Start(t, engine, func(c *server.Config) {
		c.Dev, c.APIToken = false, root
		// The anonymous rows fail authentication ~140 times from one
		// address: more than the limit lets through before 429.
		c.AuthFailureBurst = 1 << 20
		// The cleanup task stays (a pass would delete it once done), and
		// nothing else in the background moves a fixture.
		c.CleanupInterval, c.ResyncAfter, c.SentinelInterval = -1, -1, -1
	})
	s.DB().ObserveStatements(observe)
	m := matrixServer{h: s.Handler(), db: s.DB()}
	f := &matrixFixtures{project: [2]string{"team-a", "team-b"}, order: [2]string{"web-a", "web-b"},
		doomed: [2]string{"old-a", "old-b"}, provider: [2]string{"sp-a", "sp-b"}, scratch: "scratch-a",
		tokens: map[string]string{}}
	var providers [2]*providertest.Server
	for i, suffix := range []string{"a", "b"} {
		providers[i] = providertest.New(t, func(c *providertest.Config) { c.Repair = true })
		typ := "matrix-" + suffix
		m.do(t, root, "POST", "/api/v1/service-types?id="+typ, map[string]any{"schema": map[string]any{"type": "object"},
			"runtime": map[string]any{"kind": "simple", "members": true}}, http.StatusCreated)
		reg := providers[i].Registration(f.provider[i], typ)
		f.registration[i] = reg
		m.do(t, root, "POST", "/api/v1/providers?id="+f.provider[i], reg, http.StatusCreated)
		m.do(t, root, "POST", "/api/v1/catalog-items?id="+typ, map[string]any{"service_type": typ,
			"defaults": map[string]any{"name": typ}}, http.StatusCreated)
	}
	m.do(t, root, "POST", "/api/v1/policies?id=matrix-policy", map[string]any{"display_name": "matrix", "policy_type": "USER",
		"priority": 100, "label_selector": map[string]string{"matrix": "never"}, "rego_code": "package matrix\nmain := {}"},
		http.StatusCreated)

	token := func(body map[string]any) (string, string) {
		var tok struct{ ID, Token string }
		if err := json.Unmarshal(m.do(t, root, "POST", "/api/v1/tokens", body, http.StatusCreated), &tok); err != nil {
			t.Fatal(err)
		}
		return tok.ID, tok.Token
	}
	for name, body := range map[string]map[string]any{
		"admin":         {"name": "matrix-admin", "role": "admin"},
		"project_admin": {"name": "lead-a", "role": "project_admin", "project": "team-a"},
		"user":          {"name": "alice", "role": "user", "project": "team-a"},
		"provider":      {"name": "sp-a", "role": "service_account", "provider": "sp-a", "service_types": []string{"matrix-a"}},
		"adapter":       {"name": "matrix-adapter", "role": "service_account", "adapter": "matrix-adapter"},
	} {
		_, f.tokens[name] = token(body)
	}
	_, bob := token(map[string]any{"name": "bob", "role": "user", "project": "team-b"})
	users := [2]string{f.tokens["user"], bob}
	for i := range 2 {
		// Revoked by the DELETE row: no principal's.
		f.token[i], _ = token(map[string]any{"name": "spare-" + f.project[i], "role": "user", "project": f.project[i]})
	}

	// Each project's user orders its app instance and the order it deletes.
	for i, typ := range []string{"matrix-a", "matrix-b"} {
		for _, o := range []string{f.order[i], f.doomed[i]} {
			m.do(t, users[i], "POST", "/api/v1/catalog-item-instances?id="+o, map[string]any{"catalog_item_id": typ},
				http.StatusCreated)
		}
	}
	for i := range 2 {
		for _, o := range []string{f.order[i], f.doomed[i]} {
			poll(t, "order "+o+" is placed on "+f.provider[i], func() bool {
				var v struct {
					InstanceID string `json:"instance_id"`
				}
				_ = json.Unmarshal(m.do(t, users[i], "GET", "/api/v1/catalog-item-instances/"+o, nil, http.StatusOK), &v)
				_, held := providers[i].Instances()[v.InstanceID]
				if held && o == f.order[i] {
					f.instance[i] = v.InstanceID
				}
				return held
			})
		}
		// The order being deleted stays so: its provider never finishes.
		providers[i].SlowDeletes()
		m.do(t, users[i], "DELETE", "/api/v1/catalog-item-instances/"+f.doomed[i], nil, http.StatusAccepted)

		app := "/api/v1/projects/" + f.project[i] + "/app-instances/" + f.order[i]
		m.do(t, root, "PUT", app+"/runtime", map[string]any{"health": "healthy", "observed_time": time.Now().UTC(),
			"members": []map[string]any{{"id": "proc-0", "role": "server", "health": "healthy"}}}, http.StatusOK)
		f.repair[i] = idOf(t, m.do(t, users[i], "POST", app+"/repair",
			map[string]any{"action": "reconcile", "scope": "whole_runtime"}, http.StatusAccepted))
		var op operations.Operation
		err := s.DB().InTx(context.Background(), func(tx *store.Tx) (err error) {
			op, err = s.Operations().StartTx(context.Background(), tx, operations.StartParams{
				Project: f.project[i], Kind: "matrix", Target: "catalog-item-instances/" + f.order[i]})
			return err
		})
		if err != nil {
			t.Fatalf("start an operation in %s: %v", f.project[i], err)
		}
		f.operation[i] = op.ID
	}
	// The worker's token, as Steward hands it to the provider with the
	// operation.
	poll(t, "repair operation "+f.repair[0]+" is delivered to sp-a", func() bool {
		for _, c := range providers[0].Repairs() {
			if c.Repair != nil && c.Repair.OperationID == f.repair[0] {
				f.tokens["worker"] = c.Repair.Token
				return true
			}
		}
		return false
	})

	// An instance deleted deferred leaves a cleanup task, and its id taken.
	m.do(t, root, "POST", "/api/v1/service-type-instances?id="+f.scratch, map[string]any{"provider_name": "sp-a",
		"spec": map[string]any{"service_type": "matrix-a"}}, http.StatusAccepted, "Steward-Project", "team-a")
	m.do(t, root, "DELETE", "/api/v1/service-type-instances/"+f.scratch+"?deferred=true", nil, http.StatusOK,
		"Steward-Project", "team-a")
	var tasks struct{ Results []struct{ ID string } }
	if err := json.Unmarshal(m.do(t, root, "GET", "/api/v1/cleanup-tasks", nil, http.StatusOK), &tasks); err != nil ||
		len(tasks.Results) == 0 {
		t.Fatalf("no cleanup task after a deferred delete (%v)", err)
	}
	f.task = tasks.Results[0].ID
	return m, f
}

// matrixDiff is a cell whose answer is not the table's.
type matrixDiff struct {
	row              matrixRow
	principal, where string
	want             string
	got              int
	reason           string
}

// TestAuthz_EveryRouteFollowsTheMatrix sends every route of api/openapi.yaml as every
// principal, for its own project and another, and wants the answer the
// table (testdata/authz-matrix.txt) says; the document and the table list
// the same routes. On failure it lists every cell that differs, once.
func TestAuthz_EveryRouteFollowsTheMatrix(t *testing.T) {
	t.Parallel()
	rows := readMatrix(t)
	doc := openAPIDocument(t)

	// The table and the document list the same routes, once each.
	documented := map[string]bool{}
	for _, op := range documentedOperations(t) {
		documented[op.method+" "+op.path] = true
	}
	inTable := map[string]bool{}
	for _, row := range rows {
		switch {
		case inTable[row.route()]:
			t.Errorf("%s:%d: %s has two rows", matrixFile, row.line, row.route())
		case !documented[row.route()]:
			t.Errorf("%s:%d: %s is not a route of api/openapi.yaml: remove its row", matrixFile, row.line, row.route())
		}
		inTable[row.route()] = true
		op := doc.Paths.Value(row.path)
		public := op != nil && op.GetOperation(row.method) != nil && op.GetOperation(row.method).Security != nil &&
			len(*op.GetOperation(row.method).Security) == 0
		if public != (row.otherIs == "public") {
			says := map[bool]string{true: "takes no token (security: [])", false: "takes a token"}[public]
			t.Errorf("%s:%d: %s: OTHER is %s, but the document says the route %s", matrixFile, row.line, row.route(),
				row.otherIs, says)
		}
	}
	for _, route := range slices.Sorted(maps.Keys(documented)) {
		if !inTable[route] {
			t.Errorf("%s is in api/openapi.yaml but has no row in %s: say who may use it", route, matrixFile)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		m, f := startMatrix(t, engine, nil)
		start := time.Now()
		var diffs []matrixDiff
		requests := 0
		check := func(row matrixRow, principal, where, want string, r sent) {
			requests++
			got, reason, body := m.send(r)
			ok := matrixClasses[want](got)
			if ok && want == "mine" { // readMatrix keeps it to the provider's column
				if reason = otherRows(t, body, f.provider[own]); reason != "" {
					ok = false
				}
			}
			if !ok {
				diffs = append(diffs, matrixDiff{row, principal, where, want, got, reason})
			}
		}
		for _, row := range rows {
			ownReq, otherReq := f.request(t, row, "admin", own), f.request(t, row, "admin", other)
			if same := ownReq.path == otherReq.path && bytes.Equal(ownReq.body, otherReq.body); same != (row.otherIs != "team-b") {
				t.Errorf("%s:%d: %s: OTHER is %s, but the other project's request %s the own one", matrixFile, row.line,
					row.route(), row.otherIs, map[bool]string{true: "is", false: "differs from"}[same])
			}
			for _, p := range matrixPrincipals {
				for _, s := range []side{own, other} {
					check(row, p, s.String(), row.cells[p][s], f.request(t, row, p, s))
				}
				if projectBound[p] && row.otherIs != "public" {
					// Naming another project is refused, whatever the route.
					r := f.request(t, row, p, own)
					r.header["Steward-Project"] = f.project[other]
					check(row, p, "own, Steward-Project: team-b", "403", r)
				}
			}
		}
		t.Logf("%d requests in %v", requests, time.Since(start).Round(time.Millisecond))
		if len(diffs) == 0 {
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d cells differ from %s (line, route, principal, project, want, got):\n", len(diffs), matrixFile)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, d := range diffs {
			got := strconv.Itoa(d.got)
			if d.reason != "" {
				got += " " + d.reason
			}
			fmt.Fprintf(tw, "  %d\t%s %s\t%s\t%s\twant %s\tgot %s\n", d.row.line, d.row.method, d.row.path,
				d.principal, d.where, d.want, got)
		}
		_ = tw.Flush() // a strings.Builder does not fail
		t.Error(b.String())
	})
}
