package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/stewardhq/steward/pkg/client"
)

// policyCmd is `steward policy`: policy tools beside get/apply.
func (e *env) policyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: "Try policies against a request"}
	cmd.AddCommand(e.policyTestCmd())
	return cmd
}

// policyTestCmd is `steward policy test --request REQ [-f POLICY …]`:
// evaluateRequest, the chain's decision on a request without ordering,
// with draft policies standing in for stored ones.
func (e *env) policyTestCmd() *cobra.Command {
	var (
		cf        connFlags
		request   string
		files     []string
		draft     regoDraft
		selectors []string
		out       string
	)
	cmd := &cobra.Command{
		Use:   "test --request REQUEST [-f POLICY ...]",
		Short: "Run a request through the policy chain, with draft policies, and print the decision",
		Long: "Send a request to POST /api/v1/policies:evaluateRequest: the enabled policies whose\n" +
			"selector matches run in chain order and the decision is printed (the evaluated spec,\n" +
			"the selected provider, APPROVED or MODIFIED, the policies applied); a rejection or a\n" +
			"conflict exits 1 with the problem. Nothing is stored.\n\n" +
			"Each -f is a draft evaluated as if it were stored (admins only): it stands in for the\n" +
			"stored policy with its id, or joins the chain. A .rego file is the draft's code, with\n" +
			"--id (default: the file's name), --type, --priority and --selector; a YAML or JSON file\n" +
			"is a policy as `steward get policy ID -o yaml` prints it.\n\n" +
			"REQUEST is YAML or JSON: the evaluateRequest body ({service_instance: {spec: …}}), or\n" +
			"just the spec.",
		Example: "  steward policy test -f cap.rego --type GLOBAL --request vm.yaml\n" +
			"  steward policy test --request vm.json            # the stored policies only",
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if request == "" {
				return usagef("policy test needs --request FILE")
			}
			if out == "" {
				out = outYAML
			}
			if out != outJSON && out != outYAML {
				return usagef("-o %q: policy test prints json or yaml", out)
			}
			body, err := readRequest(request)
			if err != nil {
				return err
			}
			if len(selectors) > 0 {
				sel := map[string]string{}
				for _, s := range selectors {
					k, v, ok := strings.Cut(s, "=")
					if !ok || k == "" {
						return usagef("--selector %q: want KEY=VALUE, e.g. --selector service_type=vm", s)
					}
					sel[k] = v
				}
				draft.selector = sel
			}
			var drafts []any
			for _, f := range files {
				d, err := readDrafts(f, draft, cmd.Flags().Changed("id"))
				if err != nil {
					return err
				}
				drafts = append(drafts, d...)
			}
			if len(drafts) > 0 {
				body["policies"] = drafts
			}
			b, err := json.Marshal(body)
			if err != nil {
				return err
			}
			c, err := cf.connect(cmd)
			if err != nil {
				return err
			}
			raw, _, err := c.call(cmd.Context(), func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
				return api.EvaluatePolicyRequestWithBody(ctx, nil, contentJSON, bytes.NewReader(b))
			})
			if err != nil {
				return err
			}
			return (printer{w: e.stdout, format: out}).encode(json.RawMessage(raw))
		},
	}
	cf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&request, "request", "", "the request, YAML or JSON")
	f.StringArrayVarP(&files, "filename", "f", nil, "a draft policy: a .rego file, or a YAML or JSON policy (repeatable)")
	f.StringVar(&draft.id, "id", "", "a .rego draft's id: the stored policy it stands in for (default: the file's name)")
	f.Var(newEnumValue(&draft.policyType, "GLOBAL", "GLOBAL", "TENANT", "USER"), "type", "a .rego draft's policy_type: GLOBAL, TENANT or USER")
	f.IntVar(&draft.priority, "priority", 0, "a .rego draft's priority (default 500)")
	f.StringArrayVar(&selectors, "selector", nil, "a .rego draft's label_selector entry, KEY=VALUE (repeatable)")
	f.StringVarP(&out, "output", "o", "", "json or yaml (default yaml)")
	return cmd
}

// draftMembers are the members a draft policy takes (DraftPolicy).
var draftMembers = []string{"id", "display_name", "policy_type", "priority", "label_selector", "rego_code", "enabled"}

// regoDraft is what the flags say of a .rego draft.
type regoDraft struct {
	id, policyType string
	priority       int
	selector       map[string]string
}

// readDrafts reads the draft policies of a file: a .rego file's code with
// the flags' other members, or the policies of a YAML or JSON file.
func readDrafts(file string, flags regoDraft, idGiven bool) ([]any, error) {
	if filepath.Ext(file) == ".rego" {
		code, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		d := client.DraftPolicy{Id: opt(flags.id), PolicyType: client.PolicyType(flags.policyType), RegoCode: string(code)}
		if !idGiven {
			d.Id = opt(strings.TrimSuffix(filepath.Base(file), ".rego"))
		}
		if flags.priority != 0 {
			d.Priority = &flags.priority
		}
		if flags.selector != nil {
			d.LabelSelector = &flags.selector
		}
		return []any{d}, nil
	}
	docs, err := readDocuments(file, nil)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(docs))
	for i, doc := range docs {
		d := map[string]any{}
		for _, m := range draftMembers {
			if v, ok := doc[m]; ok {
				d[m] = v
			}
		}
		out[i] = d
	}
	return out, nil
}

// enumValue is a string flag that takes one of a few values.
type enumValue struct {
	p       *string
	allowed []string
}

func newEnumValue(p *string, def string, allowed ...string) *enumValue {
	*p = def
	return &enumValue{p: p, allowed: allowed}
}

func (v *enumValue) String() string { return *v.p }
func (v *enumValue) Type() string   { return "string" }
func (v *enumValue) Set(s string) error {
	if !slices.Contains(v.allowed, s) {
		return fmt.Errorf("must be one of %s", strings.Join(v.allowed, ", "))
	}
	*v.p = s
	return nil
}

// readRequest reads an evaluateRequest body; a bare spec is wrapped.
func readRequest(file string) (map[string]any, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%s: not an object: %v", file, err)
	}
	if _, ok := m["service_instance"]; !ok {
		m = map[string]any{"service_instance": map[string]any{"spec": m}}
	}
	return m, nil
}
