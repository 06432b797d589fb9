package cli_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stewardhq/steward/internal/cli"
	"github.com/stewardhq/steward/internal/poll"
)

// Issue 46, item 12: a mistyped flag, subcommand or kind says what was
// meant; the unknown-kind list has the aliases the README uses.
func TestClient_MistypesSayWhatWasMeant(t *testing.T) {
	t.Parallel()
	for _, m := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "orders", "--sevrer", "http://x"}, "unknown flag: --sevrer (did you mean --server?)"},
		{[]string{"get", "orders", "-sever", "http://x"}, "in -sever (did you mean --server?)"},
		{[]string{"provider", "proces"}, "unknown command \"proces\" for \"steward provider\"\n\nDid you mean this?\n\tprocess\n"},
		{[]string{"config", "set-contxt"}, "Did you mean this?\n\tset-context\n"},
		{[]string{"get", "ordrs"}, `unknown kind "ordrs" (did you mean orders?); the kinds are`},
		{[]string{"get", "x"}, "catalog-items (items, ci), catalog-item-instances (orders, cii)"},
	} {
		code, stderr := runIn(t, m.args...)
		if code != 2 || !strings.Contains(stderr, m.want) {
			t.Errorf("steward %s: exit %d\n%s\nwant exit 2 and %q", strings.Join(m.args, " "), code, stderr, m.want)
		}
	}
}

// orderRow is an order as the API lists it.
func orderRow(id, state, ready string) string {
	return fmt.Sprintf(`{"id":%q,"catalog_item_id":"sleeper","state":%q,"provider_name":"process-sp","etag":%q,`+
		`"create_time":"2026-01-01T00:00:00Z","conditions":[{"type":"Ready","status":%q,"reason":"Provisioning"}]}`, id, state, state, ready)
}

// Issue 46, item 12: an order of an unknown catalog item names it and the
// items there are; the rows of get orders --watch stay under the columns
// of the header above them, also when a row is wider than the first table's.
func TestClient_UnknownItemAndWatchColumns(t *testing.T) {
	t.Parallel()
	var lists atomic.Int32
	steward := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/catalog-item-instances":
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"title":"Catalog item not found","status":404,"reason":"CATALOG_ITEM_NOT_FOUND","detail":"catalog item not found"}`)
		case r.URL.Path == "/api/v1/catalog-items":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"results":[{"id":"sleeper"},{"id":"sleeper-cluster"}]}`)
		case r.URL.Path == "/api/v1/catalog-item-instances":
			rows := []string{orderRow("hello", "up", "True")}
			if lists.Add(1) > 1 {
				rows = append(rows, orderRow("a-much-longer-order-id", "creating", "False"))
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"results":[`+strings.Join(rows, ",")+`]}`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer steward.Close()
	c := newClient(t, steward.URL)

	code, _, stderr := c.run("order", "sleepr")
	if want := `no catalog item "sleepr" (did you mean sleeper?); the catalog items are sleeper, sleeper-cluster`; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("order of an unknown item: exit %d\n%s\nwant %q", code, stderr, want)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- cli.MainContext(ctx, []string{"get", "orders", "--watch", "--interval", "20ms", "--server", steward.URL, "--config", c.config},
			strings.NewReader(""), out, io.Discard)
	}()
	poll.Until(t, "the watch printed the longer order", func() bool { return strings.Contains(out.String(), "a-much-longer-order-id") })
	cancel()
	<-done
	checkColumns(t, out.String(), []string{"ID", "CATALOG ITEM", "STATE", "READY", "HEALTH", "PROVIDER", "AGE"})
}

// checkColumns fails unless each line of a table (or a watch) has a cell
// starting at each column of the header line above it, after a gap.
func checkColumns(t *testing.T, out string, header []string) {
	t.Helper()
	headerLine := regexp.MustCompile(`^` + strings.Join(header, ` +`) + `$`)
	var starts []int
	for line := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		if headerLine.MatchString(line) {
			starts = starts[:0]
			for _, h := range header {
				starts = append(starts, strings.Index(line, h))
			}
			continue
		}
		if starts == nil {
			t.Fatalf("a row before any header:\n%s", out)
		}
		for i, s := range starts[1:] {
			if len(line) <= s || line[s] == ' ' || line[s-2:s] != "  " {
				t.Errorf("column %s of the row %q does not start under its header (at %d):\n%s", header[i+1], line, s, out)
				break
			}
		}
	}
}
