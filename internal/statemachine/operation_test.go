package statemachine

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stewardhq/steward/internal/order"
)

func TestApplyOperation(t *testing.T) {
	t.Parallel()
	v1 := map[string]any{"vcpu": 1.0}
	v2 := map[string]any{"vcpu": 2.0}
	v3 := map[string]any{"vcpu": 3.0}
	cases := map[string]struct {
		reason  string
		op      Operation
		in      order.Attributes
		want    order.Attributes
		wantErr error
	}{
		"None": {reason: "No operation changes nothing.",
			in: order.Attributes{Candidate: v1, Active: v2}, want: order.Attributes{Candidate: v1, Active: v2}},
		"PromoteFirst": {reason: "The first promote makes the candidate active.", op: OpPromote,
			in: order.Attributes{Candidate: v1}, want: order.Attributes{Active: v1, Requested: v1}},
		"PromoteUpdate": {reason: "Promoting an update keeps the old active set as rollback.", op: OpPromote,
			in: order.Attributes{Candidate: v2, Active: v1, Rollback: v3}, want: order.Attributes{Active: v2, Requested: v2, Rollback: v1}},
		"PromoteUpdateAsAsked": {reason: "The rollback set is the old active set as asked, not what a policy made of it.", op: OpPromote,
			in: order.Attributes{Candidate: v2, Active: v3, Requested: v1}, want: order.Attributes{Active: v2, Requested: v2, Rollback: v1}},
		"PromoteEmptySet": {reason: "An empty but present candidate set is a set.", op: OpPromote,
			in: order.Attributes{Candidate: map[string]any{}}, want: order.Attributes{Active: map[string]any{}, Requested: map[string]any{}}},
		"PromoteNothing": {reason: "Without a candidate set, promote cannot apply.", op: OpPromote,
			in: order.Attributes{Active: v1}, wantErr: ErrOperationNotApplicable},
		"Rollback": {reason: "Rollback restores the previous set and keeps the newer one as candidate.", op: OpRollback,
			in: order.Attributes{Active: v2, Rollback: v1}, want: order.Attributes{Candidate: v2, Active: v1, Requested: v1}},
		"RollbackAsAsked": {reason: "The candidate set is the active set as asked.", op: OpRollback,
			in: order.Attributes{Active: v3, Requested: v2, Rollback: v1}, want: order.Attributes{Candidate: v2, Active: v1, Requested: v1}},
		"RollbackDropsCandidate": {reason: "The candidate set is replaced by the active one.", op: OpRollback,
			in: order.Attributes{Candidate: v3, Active: v2, Rollback: v1}, want: order.Attributes{Candidate: v2, Active: v1, Requested: v1}},
		"RollbackNothing": {reason: "Without a rollback set, rollback cannot apply.", op: OpRollback,
			in: order.Attributes{Candidate: v2, Active: v1}, wantErr: ErrOperationNotApplicable},
		"ClearCandidate": {reason: "clear candidate empties one set.", op: OpClearCandidate,
			in: order.Attributes{Candidate: v1, Active: v2, Rollback: v3}, want: order.Attributes{Active: v2, Rollback: v3}},
		"ClearActive": {reason: "clear active empties one set.", op: OpClearActive,
			in: order.Attributes{Candidate: v1, Active: v2, Requested: v2, Rollback: v3}, want: order.Attributes{Candidate: v1, Rollback: v3}},
		"ClearRollback": {reason: "clear rollback empties one set, even an empty one.", op: OpClearRollback,
			in: order.Attributes{Active: v2}, want: order.Attributes{Active: v2}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			before := tc.in
			got, err := ApplyOperation(tc.op, tc.in)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("%s\nerror = %v, want %v", tc.reason, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(before, tc.in); diff != "" {
				t.Errorf("ApplyOperation changed its input: -before +after:\n%s", diff)
			}
		})
	}
	if _, err := ApplyOperation("merge", order.Attributes{}); err == nil || errors.Is(err, ErrOperationNotApplicable) {
		t.Errorf("unknown operation: error %v, want one that is not ErrOperationNotApplicable", err)
	}
}
