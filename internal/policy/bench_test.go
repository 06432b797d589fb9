package policy

import (
	"context"
	"fmt"
	"testing"
)

// benchPolicies are typical policies: a constraint (each one tighter than
// the last, so every one is compared with those before it), a patch that
// reads the input, a provider choice among the available providers. With
// dcm, the choice is written as for DCM (available_agents, selected_agent),
// so the chain's input carries DCM's names too.
func benchPolicies(n int, dcm bool) []Policy {
	bodies := []string{
		`main := {"constraints": {"vcpu.count": {"minimum": 1, "maximum": %d}}}`,
		`main := {"patch": {"labels": {"cost_center": object.get(input.labels, "team", "shared")}}}`,
		`main := {"selected_provider": p.name} if {
	some p in input.available_providers
	p.metadata.region == "west"
}`,
	}
	if dcm {
		bodies[2] = `main := {"rejected": false, "selected_agent": a.name} if {
	some a in input.available_agents
	a.environment == "west"
}`
	}
	ps := make([]Policy, n)
	for i := range ps {
		body := bodies[i%len(bodies)]
		if i%len(bodies) == 0 {
			body = fmt.Sprintf(body, 32-i)
		}
		ps[i] = pol(fmt.Sprintf("p%d", i), TypeGlobal, i+1, body)
	}
	return ps
}

// BenchmarkEvaluate measures one run of the chain (without the database:
// the set is compiled and in memory, as in production between changes).
// ns/policy is the cost of each policy in the chain.
func BenchmarkEvaluate(b *testing.B) {
	for _, tc := range []struct {
		n   int
		dcm bool
	}{{1, false}, {3, false}, {10, false}, {3, true}, {10, true}} {
		name := fmt.Sprintf("policies=%d", tc.n)
		if tc.dcm {
			name += "/dcm"
		}
		n := tc.n
		b.Run(name, func(b *testing.B) {
			chain := chainOf(b, benchPolicies(n, tc.dcm)...)
			params := EvaluateParams{Spec: vm(), Labels: map[string]string{"team": "a"}, Project: "default",
				AvailableProviders: testProviders}
			ctx, schemas := context.Background(), newSchemaCache()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := evaluate(ctx, chain, schemas, params); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/policy")
		})
	}
}
