package lifecycle_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// A list of orders is cut by bytes as well as by rows (issue 45, finding
// 8: 21 large orders made one answer of 21 MB, built whole in memory).
// Orders of about half a MiB each, more than store.MaxPageBytes in all,
// asked for in pages of up to 1000: each answer stays within the cap and
// names the page that goes on, and the pages, followed to the end, hold
// every order once, in order.
func TestOrders_ListPagesAreCutByBytes(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		e := setupOrders(t, engine, false)
		e.s.Do(t, "POST", "/api/v1/catalog-items?id=keyed-vm", map[string]any{
			"service_type": "vm",
			"defaults": map[string]any{"vcpu": map[string]any{"count": 1}, "memory": map[string]any{"size": "1GB"},
				"guest_os": map[string]any{"type": "fedora-39"}},
			"fields": []any{map[string]any{"path": "access.ssh_public_key", "editable": true}},
		}).Want(t, http.StatusCreated)
		const orders = 10
		key := "ssh-ed25519 " + strings.Repeat("A", 200<<10) // within an order's 256 KiB spec
		var want []string
		total := 0
		for i := range orders {
			id := fmt.Sprintf("big-%02d", i)
			r := e.s.Do(t, "POST", "/api/v1/catalog-item-instances?id="+id, map[string]any{
				"catalog_item_id": "keyed-vm", "display_name": strings.Repeat("d", 256), "labels": labelsOf(64),
				"user_values": []any{map[string]any{"path": "access.ssh_public_key", "value": key}},
			}).Want(t, http.StatusCreated)
			total += len(r.Body)
			want = append(want, id)
		}
		if total <= store.MaxPageBytes {
			t.Fatalf("the orders hold %d bytes, no more than a page's %d: the test proves nothing", total, store.MaxPageBytes)
		}
		t.Logf("%d orders of %d bytes in all", orders, total)

		var got []string
		token, pages := "", 0
		for {
			pages++
			if pages > orders {
				t.Fatalf("more pages than orders; read %v", got)
			}
			path := "/api/v1/catalog-item-instances?max_page_size=1000"
			if token != "" {
				path += "&page_token=" + url.QueryEscape(token)
			}
			r := e.s.Do(t, "GET", path, nil).Want(t, http.StatusOK)
			if len(r.Body) > store.MaxPageBytes+1 { // and its newline
				t.Fatalf("page %d has %d bytes, more than the cap of %d", pages, len(r.Body), store.MaxPageBytes)
			}
			if !json.Valid(r.Body) || !bytes.HasSuffix(r.Body, []byte("}\n")) {
				t.Fatalf("page %d is not one JSON value and a newline", pages)
			}
			var page struct {
				Results []struct {
					ID string `json:"id"`
				} `json:"results"`
				NextPageToken string `json:"next_page_token"`
			}
			r.JSON(t, &page)
			if len(page.Results) == 0 {
				t.Fatalf("page %d is empty", pages)
			}
			for _, o := range page.Results {
				got = append(got, o.ID)
			}
			t.Logf("page %d: %d orders, %d bytes", pages, len(page.Results), len(r.Body))
			if token = page.NextPageToken; token == "" {
				break
			}
		}
		if pages < 2 {
			t.Errorf("%d bytes of orders came in one page", total)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("the pages held %v, want each order once, in order: %v", got, want)
		}
	})
}

// labelsOf makes n labels k0…k<n-1>.
func labelsOf(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = strings.Repeat("v", 63)
	}
	return m
}
