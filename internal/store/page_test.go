package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
)

type paged struct {
	ID  string `json:"id"`
	Pad string `json:"pad"`
}

func pagedCursor(p paged) store.Cursor {
	return store.Cursor{Time: time.Unix(0, 0).UTC(), ID: p.ID}
}

// decodePage reads an answer AppendJSON made, checking it is JSON.
func decodePage(t *testing.T, b []byte) store.Page[paged] {
	t.Helper()
	var p store.Page[paged]
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("the page is not JSON: %v: %.200s", err, b)
	}
	return p
}

// A page encodes as encoding/json encodes it until it would pass the cap;
// then it ends with the results that fit, and its token goes on after the
// last of them (issue 45, finding 8).
func TestPage_AppendJSONCutsAtTheCap(t *testing.T) {
	t.Parallel()
	rows := make([]paged, 21)
	for i := range rows {
		rows[i] = paged{ID: fmt.Sprintf("r%02d", i), Pad: strings.Repeat("x", 1000)}
	}
	req := store.PageRequest{Size: 20}
	page := store.NewPage(rows, req, pagedCursor)

	// Under no cap, as encoding/json.
	b, err := page.AppendJSON(nil, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(struct {
		Results       []paged `json:"results"`
		NextPageToken string  `json:"next_page_token"`
	}{page.Results, page.NextPageToken})
	if string(b) != string(want) {
		t.Fatalf("uncut page = %.200s…, want encoding/json's %.200s…", b, want)
	}

	// A cap of about five results keeps the results that fit in it.
	const limit = 6 << 10
	b, err = page.AppendJSON(nil, limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > limit {
		t.Fatalf("the page has %d bytes, more than its cap of %d", len(b), limit)
	}
	got := decodePage(t, b)
	if n := len(got.Results); n == 0 || n >= 20 || !slices.Equal(got.Results, rows[:n]) {
		t.Fatalf("cut page has results %d, want the first few of 20", len(got.Results))
	}
	n := len(got.Results)
	if want := rows[n-1].ID; got.NextPageToken != (store.Cursor{Time: time.Unix(0, 0).UTC(), ID: want}).Token() {
		t.Fatalf("cut page's token %q does not go on after %s", got.NextPageToken, want)
	}
	if cut := page.Cut(n); cut.NextPageToken != got.NextPageToken || len(cut.Results) != n {
		t.Fatalf("Cut(%d) = %d results, token %q; the answer had %q", n, len(cut.Results), cut.NextPageToken, got.NextPageToken)
	}

	// A result alone larger than the cap is answered alone: the client
	// still gets on.
	big := []paged{{ID: "big", Pad: strings.Repeat("y", 10<<10)}, {ID: "next"}}
	b, _ = store.NewPage(big, store.PageRequest{Size: 5}, pagedCursor).AppendJSON(nil, limit)
	if got := decodePage(t, b); len(got.Results) != 1 || got.Results[0].ID != "big" || got.NextPageToken == "" {
		t.Fatalf("a page of one outsized result = %d results, token %q", len(got.Results), got.NextPageToken)
	}

	// MapPage keeps what cuts the page; a page built by hand is not cut.
	mapped := store.MapPage(page, func(p paged) paged { p.Pad += "!"; return p })
	if got := decodePage(t, must(mapped.AppendJSON(nil, limit))); len(got.Results) >= 20 || got.NextPageToken == "" {
		t.Fatalf("a mapped page was not cut: %d results", len(got.Results))
	}
	byHand := store.Page[paged]{Results: rows[:3]}
	if got := decodePage(t, must(byHand.AppendJSON(nil, 10))); len(got.Results) != 3 || got.NextPageToken != "" {
		t.Fatalf("a page built by hand = %d results, token %q; want it whole", len(got.Results), got.NextPageToken)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// ListPage stops reading rows once their data passes MaxPageBytes, and
// its pages, followed to the end, hold every row once, in order.
func TestListPage_StopsReadingRowsPastMaxPageBytes(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := storetest.Open(t, engine)
		const rows, rowBytes = 12, 1 << 20 // 12 MiB in all
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		pad := strings.Repeat("z", rowBytes)
		insert := "INSERT INTO audit_events (id, time, actor_type, actor_id, action, target, project, outcome, request_id, details) " +
			"VALUES ($1, $2, 'user', 't', 'test.page', $3, 'page-test', 'success', '', $4)"
		query := "SELECT id, time, details FROM audit_events WHERE project = $1 AND (time, id) > ($2, $3) ORDER BY time, id LIMIT $4"
		if engine == store.SQLite {
			insert = strings.NewReplacer("$1", "?", "$2", "?", "$3", "?", "$4", "?").Replace(insert)
			query = strings.NewReplacer("$1", "?", "$2", "?", "$3", "?", "$4", "?").Replace(query)
		}
		var want []string
		for i := range rows {
			id := fmt.Sprintf("row-%02d", i)
			if _, err := db.Exec(ctx, insert, id, at, "target:"+id, store.JSON(map[string]any{"pad": pad})); err != nil {
				t.Fatal(err)
			}
			want = append(want, id)
		}
		type row struct {
			id      string
			time    time.Time
			details json.RawMessage
		}
		scan := func(s store.Scanner) (row, error) {
			var r row
			err := s.Scan(&r.id, &r.time, &r.details)
			return r, err
		}
		var got []string
		req := store.PageRequest{Size: store.MaxPageSize}
		for pages := 0; ; pages++ {
			if pages > rows {
				t.Fatalf("more pages than rows: %v", got)
			}
			page, err := store.ListPage(ctx, db, query, req, scan, func(r row) store.Cursor {
				return store.Cursor{Time: r.time, ID: r.id}
			}, "page-test")
			if err != nil {
				t.Fatal(err)
			}
			if n := len(page.Results); n == 0 || n*rowBytes > store.MaxPageBytes+rowBytes {
				t.Fatalf("a page read %d rows of %d bytes; the cap is %d bytes", n, rowBytes, store.MaxPageBytes)
			}
			for _, r := range page.Results {
				got = append(got, r.id)
			}
			if page.NextPageToken == "" {
				break
			}
			if req.After, err = store.DecodeCursor(page.NextPageToken); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("the pages held %v, want each row once in order: %v", got, want)
		}
	})
}
