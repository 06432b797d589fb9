package lifecycle_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// BenchmarkInventory measures what one request costs as the inventory grows
// (issue 27): a server holds N orders, each with its instance, its
// placement record, its lifecycle log and its audit entries, cloned in SQL
// from one order made through the API; then one client, one request at a
// time, asks for:
//
//   - get: one order;
//   - list-first: the first page of 100 orders;
//   - list-deep: the page of 100 at 90% of the list (its page token);
//   - order-create: a new order, acknowledged (provisioning runs behind);
//   - sprm-create: a new SP Resource Manager instance, through the provider;
//   - status-report: a provider's report on the first order's instance.
//
// ns/op at 10,000 and at 1,000,000 orders should differ by at most 20%.
//
//	INVENTORY_BENCH_ORDERS=10000,1000000 go test ./internal/lifecycle -run '^$' -bench Inventory -benchtime 2000x -timeout 60m
//
// (STEWARD_TEST_DATABASE_URL for PostgreSQL.) Seeding a million orders
// takes minutes; the figure it reports is the seeding's own rate.
func BenchmarkInventory(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if env := os.Getenv("INVENTORY_BENCH_ORDERS"); env != "" {
		sizes = sizes[:0]
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 2 {
				b.Fatalf("INVENTORY_BENCH_ORDERS=%q: %q is not a count of at least 2", env, f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, engine := range storetest.Engines() {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/orders=%d", engine, n), func(b *testing.B) { benchInventory(b, engine, n) })
		}
	}
}

const inventoryTemplate = "inventory-template-order"

// deepPageToken walks the first rows orders of the list, in pages of the
// most, and returns the token of the page after them.
func deepPageToken(b *testing.B, s *apitest.Server, rows int) string {
	token := ""
	for walked := 0; walked < rows; {
		var page struct {
			Results       []struct{} `json:"results"`
			NextPageToken string     `json:"next_page_token"`
		}
		s.Do(b, "GET", fmt.Sprintf("/api/v1/catalog-item-instances?max_page_size=%d&page_token=%s",
			min(store.MaxPageSize, rows-walked), token), nil).Want(b, http.StatusOK).JSON(b, &page)
		if page.NextPageToken == "" {
			b.Fatalf("the list ended after %d orders, before %d", walked+len(page.Results), rows)
		}
		walked, token = walked+len(page.Results), page.NextPageToken
	}
	return token
}

func benchInventory(b *testing.B, engine store.Engine, n int) {
	e := setupOrders(b, engine, false, benchLogger)
	tmpl := e.up(b, inventoryTemplate, 2)
	start := time.Now()
	seedInventory(b, e.s, tmpl.ID, tmpl.InstanceID, n-1)
	b.Logf("%d orders cloned in %s", n-1, time.Since(start).Round(time.Millisecond))

	// The page at 90% of the list: its token is signed, so it is the one a
	// client walking there is given.
	deepToken := deepPageToken(b, e.s, n*9/10)
	midOrder := cloneID(tmpl.ID, n/2)
	seq := 0
	for _, op := range []struct {
		name string
		do   func(b *testing.B)
	}{
		{"get", func(b *testing.B) {
			e.s.Do(b, "GET", "/api/v1/catalog-item-instances/"+midOrder, nil).Want(b, http.StatusOK)
		}},
		{"list-first", func(b *testing.B) {
			e.s.Do(b, "GET", "/api/v1/catalog-item-instances?max_page_size=100", nil).Want(b, http.StatusOK)
		}},
		{"list-deep", func(b *testing.B) {
			e.s.Do(b, "GET", "/api/v1/catalog-item-instances?max_page_size=100&page_token="+deepToken, nil).Want(b, http.StatusOK)
		}},
		{"order-create", func(b *testing.B) {
			seq++
			e.s.Do(b, "POST", fmt.Sprintf("/api/v1/catalog-item-instances?id=bench-%d", seq), map[string]any{
				"catalog_item_id": "small-vm",
			}).Want(b, http.StatusCreated)
		}},
		{"sprm-create", func(b *testing.B) {
			seq++
			e.s.Do(b, "POST", fmt.Sprintf("/api/v1/service-type-instances?id=bench-sprm-%d", seq), map[string]any{
				"provider_name": "vm-sp", "spec": map[string]any{"service_type": "vm", "vcpu": map[string]any{"count": 2},
					"memory": map[string]any{"size": "2GB"}, "guest_os": map[string]any{"type": "fedora-39"}},
			}).Want(b, http.StatusAccepted)
		}},
		{"status-report", func(b *testing.B) {
			seq++
			e.s.Do(b, "PUT", "/api/v1/service-type-instances/"+tmpl.InstanceID+"/status", map[string]any{
				"status": "RUNNING", "message": fmt.Sprintf("pid %d", seq),
				"observed_time": time.Now().UTC().Format(time.RFC3339Nano),
			}).Want(b, http.StatusOK)
		}},
	} {
		b.Run(op.name, func(b *testing.B) {
			for range 100 { // untimed: the caches the measured requests find warm
				op.do(b)
			}
			for b.Loop() {
				op.do(b)
			}
		})
	}
}

// cloneID is the id of the i-th clone of id.
func cloneID(id string, i int) string { return fmt.Sprintf("%s-%07d", id, i) }

// seedInventory clones the order orderID (with instance instanceID) count
// times in SQL: the order, its instance, its placement record, its
// lifecycle log and its audit entries, each clone's ids suffixed with its
// number (cloneID) and its create time a second earlier than the last.
func seedInventory(b testing.TB, s *apitest.Server, orderID, instanceID string, count int) {
	b.Helper()
	db := s.DB()
	pg := db.Engine() == store.Postgres
	suffix := "printf('-%07d', n.i)"
	series := fmt.Sprintf("(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) SELECT i FROM n) AS n", count)
	earlier := "strftime('%Y-%m-%dT%H:%M:%S', t.create_time, '-' || n.i || ' seconds') || '.000000Z'"
	if pg {
		suffix = "'-' || lpad(n.i::text, 7, '0')"
		series = fmt.Sprintf("generate_series(1, %d) AS n(i)", count)
		earlier = "date_trunc('second', t.create_time) - n.i * interval '1 second'"
	}
	ids := func(col string) string {
		return fmt.Sprintf("replace(replace(%s, '%s', '%s' || %s), '%s', '%s' || %s)",
			col, orderID, orderID, suffix, instanceID, instanceID, suffix)
	}
	var inserts []string
	for _, c := range []struct {
		table, where string
		set          map[string]string // column → expression; "" leaves the column out
	}{
		{"catalog_item_instances", "id = '" + orderID + "'",
			map[string]string{"create_time": earlier, "request_key": "''", "identity": "NULL"}},
		// No resync due: the clones' providers never made them, and a
		// sweep asking for a million at once is not what is measured.
		{"service_type_instances", "id = '" + instanceID + "'", map[string]string{"create_time": earlier, "resync_time": "NULL"}},
		{"resources", "instance_id = '" + instanceID + "'", map[string]string{"create_time": earlier}},
		{"order_events", "order_id = '" + orderID + "'", nil},
		{"audit_events", "target LIKE '%" + orderID + "%'", map[string]string{"seq": "", "id": "t.id || " + suffix}},
	} {
		cols := tableColumns(b, db, c.table)
		var names, exprs []string
		for _, col := range cols {
			expr, set := c.set[col.name]
			switch {
			case set && expr == "":
				continue
			case set:
			case col.text:
				expr = ids("t." + col.name)
			case col.jsonb:
				expr = ids("t."+col.name+"::text") + "::jsonb"
			default:
				expr = "t." + col.name
			}
			names = append(names, col.name)
			exprs = append(exprs, expr)
		}
		inserts = append(inserts, fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s, %s WHERE t.%s", c.table,
			strings.Join(names, ", "), strings.Join(exprs, ", "), c.table+" t", series, c.where))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if pg { // no per-row triggers: the live-instance counter is set once below
			if _, err := tx.Exec(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
				return err
			}
		}
		for _, q := range inserts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("%w\n%s", err, q)
			}
		}
		if pg { // counted in shards (migration 00038)
			if _, err := tx.Exec(ctx, `DELETE FROM provider_live_instances`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO provider_live_instances (provider_name, shard, live)
				SELECT provider_name, hashtext(id) & 63, count(*) FROM service_type_instances
				WHERE deleted_at IS NULL GROUP BY 1, 2`)
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE provider_live_instances SET live = (SELECT count(*) FROM service_type_instances i
			WHERE i.provider_name = provider_live_instances.provider_name AND i.deleted_at IS NULL)`)
		return err
	})
	if err != nil {
		b.Fatalf("clone the order: %v", err)
	}
	if pg { // the statistics autovacuum would have gathered as it grew
		if _, err := db.Exec(context.Background(), "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
}

type column struct {
	name        string
	text, jsonb bool
}

// tableColumns lists a table's columns and whether each holds text.
func tableColumns(b testing.TB, db *store.DB, table string) []column {
	b.Helper()
	q := `SELECT name, type FROM pragma_table_info(?)`
	if db.Engine() == store.Postgres {
		q = `SELECT column_name, data_type FROM information_schema.columns
			WHERE table_name = $1 AND table_schema = current_schema() ORDER BY ordinal_position`
	}
	rows, err := db.Query(context.Background(), q, table)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var cols []column
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			b.Fatal(err)
		}
		typ = strings.ToLower(typ)
		cols = append(cols, column{name: name, text: typ == "text", jsonb: typ == "jsonb" || typ == "json"})
	}
	if err := rows.Err(); err != nil || len(cols) == 0 {
		b.Fatalf("columns of %s: %v (%d)", table, err, len(cols))
	}
	return cols
}
