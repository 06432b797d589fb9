package provider

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

func TestRepairRoute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path   string
		want   [3]string
		wantOK bool
		reason string
	}{
		{path: "/api/v1/projects/p/app-instances/a/repair-operations/op/report", want: [3]string{"p", "a", "op"}, wantOK: true,
			reason: "the route Steward hands out"},
		{path: "/api/v1/projects/team%20a/app-instances/a%2Fb/repair-operations/op/report", want: [3]string{"team a", "a/b", "op"}, wantOK: true,
			reason: "ids are unescaped; the generated client escapes them back the same"},
		{path: "/api/v1/projects/a%2fb/app-instances/a/repair-operations/op/report",
			reason: "an escape the generated client would write otherwise (%2F) keeps the path as it is"},
		{path: "/api/v1/projects/p/app-instances/../repair-operations/op/report", reason: "a dot segment is no id"},
		{path: "/api/v1/projects//app-instances/a/repair-operations/op/report", reason: "an empty id is no id"},
		{path: "/api/v1/projects/p/app-instances/a/repair-operations/op/report?x=1", reason: "a query is not the route's"},
		{path: "/api/v2/projects/p/app-instances/a/repair-operations/op/report", reason: "another version"},
		{path: "api/v1/projects/p/app-instances/a/repair-operations/op/report", reason: "not absolute"},
		{path: "/report", reason: "another route"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			p, a, op, ok := repairRoute(tc.path)
			if got := [3]string{p, a, op}; ok != tc.wantOK || got != tc.want {
				t.Errorf("%s\nrepairRoute = %q, %v; want %q, %v", tc.reason, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// A request the generated client cannot build is no transport failure: it
// must not read as unreachable, which the retries would repeat forever.
func TestExchange_ClassifiesOnlyTransportFailures(t *testing.T) {
	t.Parallel()
	cause := errors.New("boom")
	_, err := exchange(t.Context(), 0, func(context.Context) (*http.Response, error) { return nil, cause })
	if !errors.Is(err, cause) || errors.Is(err, ErrUnreachable) || errors.Is(err, ErrTimeout) || retryable(err) {
		t.Errorf("build failure: err = %v, want it as it is, not retryable", err)
	}
	_, err = exchange(t.Context(), 0, func(context.Context) (*http.Response, error) { return nil, &transportError{err: cause} })
	if !errors.Is(err, cause) || !errors.Is(err, ErrUnreachable) {
		t.Errorf("transport failure: err = %v, want ErrUnreachable wrapping it", err)
	}
}
