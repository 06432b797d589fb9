package store

import "testing"

func TestStableLimits_CastsABareLimitOrOffsetParameter(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"SELECT id FROM t ORDER BY id LIMIT ?3":                "SELECT id FROM t ORDER BY id LIMIT CAST(?3 AS INTEGER)",
		"SELECT id FROM t LIMIT ? OFFSET ?":                    "SELECT id FROM t LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)",
		"select * from t limit @max_attempted_by - 1":          "select * from t limit CAST(@max_attempted_by AS INTEGER) - 1",
		"SELECT id FROM t\n  LIMIT\n  $n":                      "SELECT id FROM t\n  LIMIT\n  CAST($n AS INTEGER)",
		"SELECT id FROM t LIMIT CAST(? AS INTEGER)":            "SELECT id FROM t LIMIT CAST(? AS INTEGER)",
		"SELECT id FROM t LIMIT 10":                            "SELECT id FROM t LIMIT 10",
		"SELECT rate_limit FROM t WHERE unlimited = ? LIMIT 1": "SELECT rate_limit FROM t WHERE unlimited = ? LIMIT 1",
	} {
		if got := stableLimits(in); got != want {
			t.Errorf("stableLimits(%q) = %q, want %q", in, got, want)
		}
	}
}
