package ctl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/stewardhq/steward/api"
	"github.com/stewardhq/steward/pkg/client"
)

// applyCmd is `steward apply -f FILE`: create or update resources from a
// file, as kubectl apply does.
func (e *env) applyCmd() *cobra.Command {
	var (
		cf   connFlags
		file string
	)
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Create or update resources from a YAML or JSON file",
		Long: "Create or update each resource in FILE (YAML, several separated by ---, or JSON, an\n" +
			"object or an array; - reads standard input). A resource names its kind with a `kind`\n" +
			"member (policies, catalog-items, …) or a `path` as the API returns it, so the output\n" +
			"of `steward get KIND ID -o yaml` applies as it is.\n\n" +
			"One with an `id` that exists is updated: the members its update takes are sent (a\n" +
			"merge patch, or the whole resource where the API replaces), members the server sets\n" +
			"(state, create_time, …) are left out, a member fixed at creation must be unchanged,\n" +
			"and an `etag` is sent as If-Match, so a resource changed since it was read answers\n" +
			"412. Otherwise it is created, with the `id` when given. Members neither the request\n" +
			"nor the resource has are sent as they are, for the server to refuse by name.",
		Example: "  steward get policy vm-cap -o yaml > p.yaml && $EDITOR p.yaml && steward apply -f p.yaml",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usagef("apply needs -f FILE (or -f - for standard input)")
			}
			docs, err := readDocuments(file, cmd.InOrStdin())
			if err != nil {
				return err
			}
			plans := make([]*applyPlan, len(docs))
			for i, d := range docs {
				if plans[i], err = planApply(d); err != nil {
					return fmt.Errorf("%s, resource %d: %w", file, i+1, err)
				}
			}
			c, err := cf.connect(cmd)
			if err != nil {
				return err
			}
			for _, p := range plans {
				verb, err := p.run(cmd.Context(), c)
				if err != nil {
					return fmt.Errorf("%s: %w", p.name(), err)
				}
				fmt.Fprintf(e.stdout, "%s %s\n", p.name(), verb)
			}
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the file to apply, YAML or JSON (- for standard input)")
	return cmd
}

// readDocuments reads the objects of a YAML or JSON file.
func readDocuments(file string, stdin io.Reader) ([]map[string]any, error) {
	var b []byte
	var err error
	if file == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, err
	}
	var chunks [][]byte
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(t, &list); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for _, r := range list {
			chunks = append(chunks, r)
		}
	} else {
		chunks = splitYAML(b)
	}
	var docs []map[string]any
	for i, c := range chunks {
		j, err := yaml.YAMLToJSON(c)
		if err != nil {
			return nil, fmt.Errorf("%s, resource %d: %w", file, i+1, err)
		}
		if string(bytes.TrimSpace(j)) == "null" {
			continue // an empty document
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(j))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			return nil, fmt.Errorf("%s, resource %d: not an object: %w", file, i+1, err)
		}
		docs = append(docs, m)
	}
	if len(docs) == 0 {
		return nil, usagef("%s holds no resource", file)
	}
	return docs, nil
}

// splitYAML splits a multi-document YAML stream at its "---" lines.
func splitYAML(b []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimRight(line, " \t") == "---" {
			docs = append(docs, bytes.Clone(cur.Bytes()))
			cur.Reset()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	return append(docs, cur.Bytes())
}

// applyPlan is one resource of the file, with what apply will do with it.
type applyPlan struct {
	k    *kind
	id   string
	etag string
	doc  map[string]any
}

func (p *applyPlan) name() string {
	if p.id == "" {
		return p.k.name + "/(new)"
	}
	return p.k.name + "/" + p.id
}

// planApply finds a document's kind and id.
func planApply(doc map[string]any) (*applyPlan, error) {
	kindName, _ := doc["kind"].(string)
	path, _ := doc["path"].(string)
	collection, pathID, _ := strings.Cut(path, "/")
	if kindName == "" {
		kindName = collection
	}
	if kindName == "" {
		return nil, usagef("no kind: add `kind: policies` (or another collection) or the `path` the API returned")
	}
	k, err := findKind(kindName)
	if err != nil {
		return nil, err
	}
	switch {
	case k.name == "tokens":
		// POST /api/v1/tokens makes one, but its secret is shown only then:
		// a file applied again would make another each time.
		return nil, usagef("tokens cannot be applied: a token is made once and its secret shown only then; " +
			"use: steward token create --name NAME --role ROLE")
	case k.create == nil:
		return nil, usagef("%s cannot be applied: the API does not create them", k.name)
	}
	delete(doc, "kind")
	id, _ := doc["id"].(string)
	if id == "" {
		id = pathID
	}
	if id == "" && k.name == "providers" {
		id, _ = doc["name"].(string) // a provider's id is its name
	}
	etag, _ := doc["etag"].(string)
	return &applyPlan{k: k, id: id, etag: etag, doc: doc}, nil
}

// run creates or updates the resource and says which ("created",
// "configured", "unchanged").
func (p *applyPlan) run(ctx context.Context, c *conn) (string, error) {
	var current object
	if p.id != "" {
		o, err := c.getObject(ctx, p.k, p.id)
		var perr *client.ProblemError
		switch {
		case err == nil:
			current = o
		case errors.As(err, &perr) && perr.Status == http.StatusNotFound:
		default:
			return "", err
		}
	}
	if current.m == nil {
		body, err := p.createBody()
		if err != nil {
			return "", err
		}
		_, _, err = c.call(ctx, func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
			return p.k.create(ctx, api, p.id, bytes.NewReader(body))
		})
		return "created", err
	}
	if p.k.update == nil {
		return "", fmt.Errorf("exists, and %s cannot be updated through the API", p.k.name)
	}
	body, changed, err := p.updateBody(current)
	if err != nil || !changed {
		return "unchanged", err
	}
	_, _, err = c.call(ctx, func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
		return p.k.update(ctx, api, p.id, p.etag, bytes.NewReader(body))
	})
	return "configured", err
}

// createBody is the document less the members only the server sets.
func (p *applyPlan) createBody() ([]byte, error) {
	s, err := loadSchemas()
	if err != nil {
		return nil, err
	}
	create, resource := s.props(p.k.createSchema), s.props(p.k.schemaName())
	body := map[string]any{}
	for m, v := range p.doc {
		if create[m] || !resource[m] {
			body[m] = v
		}
	}
	return json.Marshal(body)
}

// updateBody is what changes the resource to the document: for a merge
// patch the members the update takes whose value differs, for a replace
// every member it takes. A member fixed at creation that differs is an
// error; members the server sets are left out.
func (p *applyPlan) updateBody(current object) ([]byte, bool, error) {
	s, err := loadSchemas()
	if err != nil {
		return nil, false, err
	}
	create, update, resource := s.props(p.k.createSchema), s.props(p.k.updateSchema), s.props(p.k.schemaName())
	body := map[string]any{}
	changed := false
	for m, v := range p.doc {
		same := equalJSON(v, current.m[m])
		switch {
		case update[m]:
			body[m] = v
			changed = changed || !same
		case !resource[m] && !create[m]:
			body[m] = v // unknown: the server names it in its 400
			changed = true
		case create[m] && !same:
			return nil, false, fmt.Errorf("%s is fixed at creation: it is %s, the file says %s; delete and re-create to change it",
				m, compactJSON(current.m[m]), compactJSON(v))
		}
	}
	if !p.k.replace {
		for m, v := range body {
			if update[m] && equalJSON(v, current.m[m]) {
				delete(body, m)
			}
		}
	}
	if !changed {
		return nil, false, nil
	}
	b, err := json.Marshal(body)
	return b, true, err
}

func equalJSON(a, b any) bool {
	na, nb := normalize(a), normalize(b)
	return reflect.DeepEqual(na, nb)
}

// normalize decodes a value's JSON again, so that numbers and nested types
// compare alike whatever decoded them.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// schemaName is the name of the kind's resource schema in api/openapi.yaml.
func (k *kind) schemaName() string {
	var b strings.Builder
	for part := range strings.SplitSeq(strings.TrimSuffix(strings.TrimSuffix(k.name, "ies"), "s"), "-") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	if strings.HasSuffix(k.name, "ies") {
		b.WriteString("y")
	}
	return b.String()
}

// schemas are the component schemas of the embedded OpenAPI document: which
// members each request and resource has.
type schemas map[string]struct {
	Properties map[string]json.RawMessage `json:"properties"`
}

func (s schemas) props(name string) map[string]bool {
	out := map[string]bool{}
	for m := range s[name].Properties {
		out[m] = true
	}
	return out
}

var loadSchemas = sync.OnceValues(func() (schemas, error) {
	j, err := yaml.YAMLToJSON(api.OpenAPIYAML)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Components struct {
			Schemas schemas `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(j, &doc); err != nil {
		return nil, err
	}
	return doc.Components.Schemas, nil
})
