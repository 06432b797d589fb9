package processprovider

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/pkg/provider"
)

func TestParseSpec_Members(t *testing.T) {
	t.Parallel()
	got, ignored, err := parseSpec(decodeSpec(t, `{"process": {"command": ["/bin/true"]},
		"members": [{"id": "server-0", "role": "server"}, {"id": "a", "role": "agent", "zone": "ignored"}]}`), true)
	if err != nil {
		t.Fatal(err)
	}
	want := []memberSpec{{id: "server-0", role: "server"}, {id: "a", role: "agent"}}
	if diff := cmp.Diff(want, got.members, cmp.AllowUnexported(memberSpec{})); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if len(ignored) != 0 {
		t.Errorf("ignored = %v, want none: members is read", ignored)
	}
	if other, _, _ := parseSpec(decodeSpec(t, `{"process": {"command": ["/bin/true"]}, "members": [{"id": "a", "role": "server"}]}`), true); got.equal(other) {
		t.Error("specs with other members are equal, want different: an update must restart")
	}
}

func TestCreate_InvalidMembersAreRefused(t *testing.T) {
	t.Parallel()
	many := make([]string, 17)
	for i := range many {
		many[i] = `{"id": "m` + strings.Repeat("x", i) + `", "role": "server"}`
	}
	cases := []struct {
		name       string
		reason     string
		members    string
		wantFields []string
	}{
		{name: "Empty", reason: "a cluster has a member", members: `[]`, wantFields: []string{"spec.members"}},
		{name: "TooMany", reason: "at most 16 members", members: "[" + strings.Join(many, ",") + "]", wantFields: []string{"spec.members"}},
		{name: "NotAnArray", reason: "members is a list", members: `{"id": "a"}`, wantFields: []string{"spec.members"}},
		{name: "Uppercase", reason: "ids are lowercase", members: `[{"id": "Server", "role": "server"}]`, wantFields: []string{"spec.members[0].id"}},
		{name: "TrailingDash", reason: "ids end with a letter or digit", members: `[{"id": "s", "role": "server"}, {"id": "a-", "role": "agent"}]`, wantFields: []string{"spec.members[1].id"}},
		{name: "TooLong", reason: "ids have at most 32 characters", members: `[{"id": "` + strings.Repeat("s", 33) + `", "role": "server"}]`, wantFields: []string{"spec.members[0].id"}},
		{name: "NoID", reason: "every member has an id", members: `[{"role": "server"}]`, wantFields: []string{"spec.members[0].id"}},
		{name: "Duplicate", reason: "ids are unique", members: `[{"id": "s", "role": "server"}, {"id": "s", "role": "agent"}]`, wantFields: []string{"spec.members[1].id"}},
		{name: "BadRole", reason: "roles are server or agent", members: `[{"id": "s", "role": "server"}, {"id": "w", "role": "worker"}]`, wantFields: []string{"spec.members[1].role"}},
		{name: "NoServer", reason: "a runtime is judged by its servers", members: `[{"id": "a", "role": "agent"}]`, wantFields: []string{"spec.members"}},
	}
	b := setup(t, nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := "refused-" + strings.ToLower(tc.name)
			_, err := b.create(t, id, `{"process": {"command": ["/bin/true"]}, "members": `+tc.members+`}`)
			var status interface{ HTTPStatus() int }
			if !errors.As(err, &status) || status.HTTPStatus() != 400 {
				t.Fatalf("%s\nerr = %v, want one with HTTPStatus 400", tc.reason, err)
			}
			ie, ok := errors.AsType[*invalid.Error](err)
			if !ok {
				t.Fatalf("%s\nerr = %v, want an *invalid.Error inside", tc.reason, err)
			}
			var fields []string
			for _, f := range ie.Fields {
				fields = append(fields, f.Field)
			}
			if diff := cmp.Diff(tc.wantFields, fields); diff != "" {
				t.Errorf("%s\nfields (-want +got):\n%s", tc.reason, diff)
			}
			if _, err := b.p.Get(context.Background(), id); !errors.Is(err, provider.ErrNotFound) {
				t.Errorf("Get after refusal: err = %v, want ErrNotFound", err)
			}
		})
	}
}
