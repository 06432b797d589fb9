package policy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// deniedBuiltins reach outside the process: a policy must decide from its
// input alone, quickly, and must not read the server's environment.
var deniedBuiltins = []string{"http.send", "net.lookup_ip_addr", "opa.runtime"}

// capabilities are OPA's, less deniedBuiltins.
var capabilities = sync.OnceValue(func() *ast.Capabilities {
	c := ast.CapabilitiesForThisVersion()
	c.Builtins = slices.DeleteFunc(c.Builtins, func(b *ast.Builtin) bool { return slices.Contains(deniedBuiltins, b.Name) })
	c.AllowNet = []string{}
	return c
})

// module is one policy's compiled Rego. It is immutable and safe for
// concurrent use, so snapshots share it while its code is unchanged.
type module struct {
	// pkg is the package path ("data.steward.quota"); two enabled policies
	// may not share one.
	pkg   string
	query rego.PreparedEvalQuery
	// dcmInput is set when the code may read the input under DCM's names
	// (inputAliases): only then does the chain add them to the input.
	dcmInput bool
	// unknownKeys are the members main visibly answers that the contract
	// does not know.
	unknownKeys []*UnknownKeyError
}

// checkOutputKeys refuses a module whose main visibly answers a member
// the contract does not know. It runs when a policy is created or changed,
// not when the stored set is loaded: a policy stored before the check
// existed still loads, and fails the chain (500) when it answers the
// member, rather than keeping every other policy from loading.
func checkOutputKeys(p Policy, mod *module) error {
	if len(mod.unknownKeys) == 0 {
		return nil
	}
	e := &InvalidPolicyError{PolicyID: p.ID}
	for _, u := range mod.unknownKeys {
		e.Messages = append(e.Messages, u.Error())
	}
	return e
}

// compileModule parses and compiles p's Rego as a Rego v1 module and
// prepares the query data.<package>.main. It returns an
// [*InvalidPolicyError] for code that does not parse or compile, or that
// has no rule main.
func compileModule(ctx context.Context, p Policy) (*module, error) {
	file := "policies/" + p.ID + ".rego"
	caps := capabilities()
	parsed, err := ast.ParseModuleWithOpts(file, p.RegoCode, ast.ParserOptions{RegoVersion: ast.RegoV1, Capabilities: caps})
	if err != nil {
		return nil, invalidPolicy(p.ID, err)
	}
	if !definesMain(parsed) {
		return nil, &InvalidPolicyError{PolicyID: p.ID,
			Messages: []string{fmt.Sprintf("package %s must define a rule main", parsed.Package.Path)}}
	}

	query := parsed.Package.Path.Append(ast.StringTerm("main")).String()
	pq, err := rego.New(
		rego.Query(query),
		rego.ParsedModule(parsed),
		rego.Capabilities(caps),
		rego.SetRegoVersion(ast.RegoV1),
	).PrepareForEval(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("compile policy %s: %w", p.ID, ctx.Err())
		}
		return nil, invalidPolicy(p.ID, err)
	}
	return &module{pkg: parsed.Package.Path.String(), query: pq, dcmInput: readsDCMInput(parsed),
		unknownKeys: unknownOutputKeys(parsed)}, nil
}

// readsDCMInput reports whether m may read an input member under one of
// DCM's names: it names one, or reads the input whole or by a computed key.
func readsDCMInput(m *ast.Module) bool {
	found := false
	ast.NewGenericVisitor(func(x any) bool {
		switch x := x.(type) {
		case ast.Ref:
			if !x[0].Equal(ast.InputRootDocument) {
				return found
			}
			if len(x) == 1 {
				found = true
			} else if key, ok := x[1].Value.(ast.String); !ok || slices.Contains(dcmInputNames, string(key)) {
				found = true
			}
			return true // its head is not a bare input
		case ast.Var:
			// input as a plain term: x := input, object.get(input, k, d).
			found = found || x.Equal(ast.InputRootDocument.Value)
		}
		return found
	}).Walk(m)
	return found
}

func definesMain(m *ast.Module) bool {
	main := ast.VarTerm("main")
	for _, r := range m.Rules {
		if ref := r.Head.Ref(); len(ref) > 0 && ref[0].Equal(main) {
			return true
		}
	}
	return false
}

// unknownOutputKeys returns the members main's rules answer that the
// contract does not know, where the code shows them: the constant keys of
// an object literal main evaluates to (main := {...}), of a member rule
// (main.colour := ...), and of a provider constraints object literal among
// them. Keys computed at run time are checked when they appear.
func unknownOutputKeys(m *ast.Module) []*UnknownKeyError {
	var out []*UnknownKeyError
	seen := map[string]bool{}
	report := func(prefix, key string, known []string) {
		if path := prefix + key; !slices.Contains(known, key) && !seen[path] {
			seen[path] = true
			out = append(out, &UnknownKeyError{Key: path, Known: known})
		}
	}
	checkMember := func(key string, value *ast.Term) {
		report("", key, outputKeys)
		switch key {
		case keyProviderConstraints, keyServiceProviderConstraints, keyAgentConstraints:
		default:
			return
		}
		if obj, ok := value.Value.(ast.Object); ok {
			obj.Foreach(func(k, _ *ast.Term) {
				if s, ok := k.Value.(ast.String); ok {
					report(key+".", string(s), providerConstraintKeys)
				}
			})
		}
	}
	main := ast.VarTerm("main")
	var rules []*ast.Rule
	for _, r := range m.Rules {
		for ; r != nil; r = r.Else { // main := {...} if {...} else := {...}
			rules = append(rules, r)
		}
	}
	for _, r := range rules {
		ref := r.Head.Ref()
		if len(ref) == 0 || !ref[0].Equal(main) || r.Head.Value == nil {
			continue
		}
		switch {
		case len(ref) == 1:
			if obj, ok := r.Head.Value.Value.(ast.Object); ok {
				obj.Foreach(func(k, v *ast.Term) {
					if s, ok := k.Value.(ast.String); ok {
						checkMember(string(s), v)
					}
				})
			}
		case len(ref) == 2:
			if s, ok := ref[1].Value.(ast.String); ok {
				checkMember(string(s), r.Head.Value)
			}
		}
	}
	return out
}

func invalidPolicy(id string, err error) *InvalidPolicyError {
	e := &InvalidPolicyError{PolicyID: id}
	var astErrs ast.Errors
	if errors.As(err, &astErrs) {
		for _, ae := range astErrs {
			e.Messages = append(e.Messages, ae.Error())
		}
	}
	if len(e.Messages) == 0 {
		e.Messages = []string{err.Error()}
	}
	return e
}

// snapshot is a compiled policy set. It is immutable: a change builds a new
// one and swaps it in, so evaluations in flight finish on the set they
// started with.
type snapshot struct {
	// revision is the policy_revision the set was read at.
	revision int64
	// chain holds the enabled policies in evaluation order.
	chain []entry
	// modules indexes the compiled code by moduleKey, for reuse.
	modules map[string]*module
}

type entry struct {
	policy Policy
	mod    *module
}

// moduleKey identifies compiled code; the id is part of it because OPA's
// messages name the module's file.
func moduleKey(p Policy) string { return p.ID + "\x00" + p.RegoCode }

// buildSnapshot compiles the enabled policies among ps into a snapshot,
// reusing the modules of prev and of fresh (compiled just now) whose code is
// unchanged. Two policies with one package give an [*InvalidPolicyError]
// naming blame, if it is one of them.
func buildSnapshot(ctx context.Context, revision int64, ps []Policy, prev *snapshot, fresh map[string]*module, blame string) (*snapshot, error) {
	s := &snapshot{revision: revision, modules: make(map[string]*module, len(ps))}
	owner := map[string]Policy{}
	for _, p := range ps {
		if !p.Enabled {
			continue
		}
		key := moduleKey(p)
		mod := fresh[key]
		if mod == nil && prev != nil {
			mod = prev.modules[key]
		}
		if mod == nil {
			var err error
			if mod, err = compileModule(ctx, p); err != nil {
				return nil, err
			}
		}
		if other, ok := owner[mod.pkg]; ok {
			if other.ID == blame {
				other, p = p, other
			}
			return nil, &InvalidPolicyError{PolicyID: p.ID, Messages: []string{
				fmt.Sprintf("package %s is already used by policy %s", mod.pkg, other.Ref())}}
		}
		owner[mod.pkg] = p
		s.modules[key] = mod
		s.chain = append(s.chain, entry{policy: p, mod: mod})
	}
	slices.SortFunc(s.chain, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.policy.PolicyType.rank(), b.policy.PolicyType.rank()),
			cmp.Compare(a.policy.Priority, b.policy.Priority), cmp.Compare(a.policy.ID, b.policy.ID))
	})
	return s, nil
}
