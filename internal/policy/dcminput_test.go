package policy

import (
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

func TestReadsDCMInput(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]bool{
		`main := {"patch": {"a": input.spec.a}}`:                           false,
		`main := {"selected_provider": input.available_providers[0].name}`: false,
		`main := {"patch": {"a": 1}}`:                                      false,
		`main := {"selected_agent": input.available_agents[0].name}`:       true,
		`main := {"patch": {"p": input.agent}}`:                            true,
		`main := {"patch": {"p": object.get(input, "agent", "")}}`:         true,
		`main := {"patch": {"p": input[k]}} if some k in ["agent"]`:        true,
		`x := input
main := {"patch": {"p": x.spec}}`: true,
	} {
		m, err := ast.ParseModuleWithOpts("t.rego", "package t\n\n"+body, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if got := readsDCMInput(m); got != want {
			t.Errorf("readsDCMInput(%s) = %v, want %v", body, got, want)
		}
	}
}
