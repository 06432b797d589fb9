package httpapi

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/stewardhq/steward/internal/invalid"
)

// order_by takes the field (oldest first, as when absent) or "field desc"
// (newest first), once; anything else is INVALID_ARGUMENT naming order_by
// (issue 46).
func TestQueryOrderBy(t *testing.T) {
	t.Parallel()
	for query, want := range map[string]bool{"": false, "order_by=create_time": false,
		"order_by=create_time%20desc": true, "order_by=create_time+desc": true} {
		desc, err := QueryOrderBy(httptest.NewRequest("GET", "/x?"+query, nil), "create_time")
		if err != nil || desc != want {
			t.Errorf("?%s: %v, %v; want %v", query, desc, err, want)
		}
	}
	for _, query := range []string{"order_by=", "order_by=create_time%20asc", "order_by=create_time%20DESC",
		"order_by=id", "order_by=create_time,id", "order_by=create_time&order_by=create_time"} {
		_, err := QueryOrderBy(httptest.NewRequest("GET", "/x?"+query, nil), "create_time")
		var inv *invalid.Error
		if !errors.As(err, &inv) || len(inv.Fields) != 1 || inv.Fields[0].Field != "order_by" {
			t.Errorf("?%s: %v, want an invalid argument naming order_by", query, err)
		}
	}
}
