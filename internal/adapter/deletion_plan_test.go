package adapter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDeletionGraph(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		names       []string
		after       [][]string
		wantOrder   []string
		wantUnknown []unknownRef
		wantSelf    []int
		wantCycles  [][]string
		reason      string
	}{
		{name: "no after keeps declaration order", names: []string{"a", "b", "c"}, after: [][]string{nil, nil, nil},
			wantOrder: []string{"a", "b", "c"}, reason: "ready resources go in declaration order"},
		{name: "after puts dependencies first", names: []string{"ns", "cfg", "job"}, after: [][]string{{"cfg", "job"}, nil, {"cfg"}},
			wantOrder: []string{"cfg", "job", "ns"}, reason: "ns after cfg and job, job after cfg"},
		{name: "unknown names", names: []string{"a", "b"}, after: [][]string{{"x"}, {"a", "y", "z"}},
			wantUnknown: []unknownRef{{0, "a", []string{"x"}}, {1, "b", []string{"y", "z"}}}, reason: "every unknown name, per resource"},
		{name: "self", names: []string{"a", "b"}, after: [][]string{nil, {"b", "b"}},
			wantSelf: []int{1}, wantOrder: []string{"a", "b"}, reason: "a resource after itself, once"},
		{name: "two cycles", names: []string{"a", "b", "c", "d"}, after: [][]string{{"b"}, {"a"}, {"d"}, {"c"}},
			wantCycles: [][]string{{"a", "b", "a"}, {"c", "d", "c"}}, reason: "each cycle once, named from where the search entered it"},
		{name: "a cycle through three", names: []string{"a", "b", "c"}, after: [][]string{{"b"}, {"c"}, {"a"}},
			wantCycles: [][]string{{"a", "b", "c", "a"}}, reason: "the cycle's path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, f := buildDeletionGraph(tt.names, tt.after)
			got := struct {
				Unknown []unknownRef
				Self    []int
				Cycles  [][]string
			}{f.unknown, f.self, f.cycles}
			want := struct {
				Unknown []unknownRef
				Self    []int
				Cycles  [][]string
			}{tt.wantUnknown, tt.wantSelf, tt.wantCycles}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(unknownRef{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("faults (-want +got):\n%s\nreason: %s", diff, tt.reason)
			}
			if tt.wantOrder == nil {
				return
			}
			order, ok := g.order()
			var names []string
			for _, i := range order {
				names = append(names, tt.names[i])
			}
			if !ok || !cmp.Equal(names, tt.wantOrder) {
				t.Errorf("order = %v (%v), want %v\nreason: %s", names, ok, tt.wantOrder, tt.reason)
			}
		})
	}
}

func TestDeletionGraph_OrderRefusesACycle(t *testing.T) {
	t.Parallel()
	g, _ := buildDeletionGraph([]string{"a", "b"}, [][]string{{"b"}, {"a"}})
	if _, ok := g.order(); ok {
		t.Error("order of a cycle reported ok")
	}
}
