package provider_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stewardhq/steward/pkg/provider"
)

func TestDetail(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ text, want string }{
		"empty":      {"", ""},
		"blank":      {" \n\t\n", ""},
		"one line":   {"sleep: invalid time interval 'x'\n", "sleep: invalid time interval 'x'"},
		"lines join": {"a\n\n  b  \r\nc", "a | b | c"},
		"last five":  {"1\n2\n3\n4\n5\n6\n7\n", "3 | 4 | 5 | 6 | 7"},
		"controls":   {"a\x1b[31mred\x00", "a [31mred"},
		"url password": {"connect to postgres://admin:s3cr%2Ft@db:5432/x failed",
			"connect to postgres://admin:xxxxx@db:5432/x failed"},
		"url without password": {"GET http://user@host/x", "GET http://user@host/x"},
		"setting password": {"host=db password='a b' user=u PGPASSWORD=hunter2 pwd = x",
			"host=db password=xxxxx user=u PGPASSWORD=xxxxx pwd = xxxxx"},
	} {
		if got := provider.Detail(tc.text); got != tc.want {
			t.Errorf("%s: Detail(%q) = %q, want %q", name, tc.text, got, tc.want)
		}
	}
}

func TestDetail_KeepsTheEndWithinTheBound(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", provider.MaxDetailLen) + " the end"
	got := provider.Detail(long)
	if len(got) > provider.MaxDetailLen || !utf8.ValidString(got) ||
		!strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "é the end") {
		t.Errorf("Detail of %d bytes = %d bytes %q…, want at most %d valid bytes, \"…\" then the end",
			len(long), len(got), got[:min(len(got), 20)], provider.MaxDetailLen)
	}
}
