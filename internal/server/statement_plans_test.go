package server_test

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// smallTables hold configuration, not inventory: a few rows each, which a
// statement may read whole. Every other table grows with orders, requests
// or time.
// event_outbox and order_changes are queues, as long as their backlog: a
// row goes once published, or once its order's reconcile took it.
var smallTables = []string{"catalog_items", "policies", "policy_revision", "providers", "provider_live_instances",
	"server_secrets", "service_types", "steward_processes", "event_outbox", "order_changes"}

// planned matches the statements that have a plan (not SAVEPOINT, SET, …),
// after any leading comment lines.
var planned = regexp.MustCompile(`(?is)^\s*(?:--[^\n]*\n\s*)*(SELECT|INSERT|UPDATE|DELETE|WITH)\b`)

// Issue 46, item 0: every statement the server runs for a request, and for
// the work a request causes, reads the tables that grow through an index,
// on both engines and as the statement runs (PostgreSQL's generic plan, which
// knows no argument; SQLite's plan for a bound parameter). A create with an
// Idempotency-Key once scanned every order: its lookup could not use the
// partial index on request_key, which no list or sweep test ran. Every route
// of the authorization matrix is sent, as an admin and as a user, POSTs with
// an Idempotency-Key, over the matrix's fixtures (orders placed, reported,
// repaired, deleted).
func TestPlans_EveryStatementOfEveryRouteReadsOnIndex(t *testing.T) {
	t.Parallel()
	rows := readMatrix(t)
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		var mu sync.Mutex
		args := map[string][]any{} // by statement, the arguments it first ran with
		m, f := startMatrix(t, engine, func(query string, a []any) {
			if !planned.MatchString(query) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if _, ok := args[query]; !ok {
				args[query] = slices.Clone(a)
			}
		})
		codes := map[int]int{}
		for i, row := range rows {
			for _, principal := range []string{"admin", "user"} {
				r := f.request(t, row, principal, own)
				if row.method == "POST" {
					r.header["Idempotency-Key"] = fmt.Sprintf("plans-%d-%s", i, principal)
				}
				code, _, _ := m.send(r)
				codes[code]++
			}
		}
		// The matrix's creates are refused (their bodies are invalid, so
		// that they change no fixture): a careful client's requests, each
		// sent twice with its key (the second is answered from the first).
		user, app := "Bearer "+f.tokens["user"], "/api/v1/projects/team-a/app-instances/"+f.order[own]
		for i, r := range []sent{
			{method: "POST", path: "/api/v1/catalog-item-instances", body: []byte(`{"catalog_item_id": "matrix-a"}`)},
			{method: "POST", path: "/api/v1/catalog-item-instances/" + f.order[own] + ":rotateCredentials"},
			{method: "POST", path: "/api/v1/catalog-item-instances/" + f.order[own] + ":rehydrate"},
			{method: "POST", path: app + "/repair", body: []byte(`{"action": "reconcile", "scope": "whole_runtime"}`)},
		} {
			r.header = map[string]string{"Authorization": user, "Idempotency-Key": fmt.Sprintf("plans-keyed-%d", i)}
			for range 2 {
				code, _, _ := m.send(r)
				codes[code]++
			}
		}
		m.db.ObserveStatements(nil)
		mu.Lock()
		defer mu.Unlock()
		var scans []string
		for _, query := range slices.Sorted(maps.Keys(args)) {
			plan, err := storetest.Plan(context.Background(), m.db, query, args[query]...)
			if err != nil {
				t.Errorf("%v", err)
				continue
			}
			for _, table := range storetest.ScannedTables(plan) {
				if !slices.Contains(smallTables, table) {
					scans = append(scans, fmt.Sprintf("scans %s:\n%s\n  plan:\n%s", table, indent(query), indent(plan)))
				}
			}
		}
		t.Logf("%d statements explained; answers %v", len(args), codes)
		if len(scans) > 0 {
			t.Errorf("%d statements read a growing table whole:\n%s", len(scans), strings.Join(scans, "\n"))
		}
	})
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ")
}
