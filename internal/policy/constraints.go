package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fieldConstraint is one policy's JSON Schema for one spec field.
type fieldConstraint struct {
	by     Policy
	schema any
	*compiledSchema
}

// constraintSet accumulates the field constraints of one evaluation. Every
// schema applies (allOf), and a later policy's schema must be at least as
// strict as the earlier ones it meets and leave a value (see narrows).
type constraintSet struct {
	byPath  map[string][]fieldConstraint
	schemas *schemaCache
	view    map[string]any
}

func newConstraintSet(schemas *schemaCache) *constraintSet {
	return &constraintSet{byPath: map[string][]fieldConstraint{}, schemas: schemas, view: map[string]any{}}
}

// add records by's schema for the field at path (dotted). It returns a
// [*ConflictError] when the schema loosens or contradicts an earlier one
// (narrows), and an [*EvaluationError] for a schema that does not compile.
func (cs *constraintSet) add(by Policy, path string, schema any) error {
	if path == "" || strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") || strings.Contains(path, "..") {
		return &EvaluationError{Policy: by.Ref(), Err: fmt.Errorf("constraints: %q is not a dotted field path", path)}
	}
	for _, have := range cs.byPath[path] {
		if equalJSON(have.schema, schema) {
			return nil // restated: nothing new
		}
	}
	compiled, err := cs.schemas.compile(schema)
	if err != nil {
		return &EvaluationError{Policy: by.Ref(), Err: fmt.Errorf("constraints.%s is not a JSON Schema: %w", path, err)}
	}
	fc := fieldConstraint{by: by, schema: schema, compiledSchema: compiled}
	if err := narrows(path, cs.byPath[path], fc); err != nil {
		return err
	}
	cs.byPath[path] = append(cs.byPath[path], fc)
	if list := cs.byPath[path]; len(list) == 1 {
		cs.view[path] = schema
	} else {
		all := make([]any, len(list))
		for i, fc := range list {
			all[i] = fc.schema
		}
		cs.view[path] = map[string]any{"allOf": all}
	}
	return nil
}

// check validates spec against every constraint, after policy current
// added constraints or patched the spec. A value the request itself sent
// (equal to orig's) that breaks a constraint is a [*RejectedError] by the
// constraint's policy: the request asks for what a policy forbids. A value
// a policy's patch produced is a [*ConflictError]: the policies disagree.
func (cs *constraintSet) check(spec, orig map[string]any, current Policy) error {
	for _, path := range slices.Sorted(maps.Keys(cs.byPath)) {
		v, ok := lookup(spec, path)
		if !ok {
			continue // an absent field breaks no constraint
		}
		for _, fc := range cs.byPath[path] {
			err := fc.valid.Validate(v)
			if err == nil {
				continue
			}
			msg := schemaMessage(err)
			if ov, had := lookup(orig, path); had && equalJSON(ov, v) {
				return &RejectedError{Policy: fc.by.Ref(),
					Reason: fmt.Sprintf("field %s violates the constraint set by policy %s: %s", path, fc.by.Ref(), msg)}
			}
			ref := fc.by.Ref()
			return &ConflictError{Policy: current.Ref(), Field: path, With: &ref,
				Reason: fmt.Sprintf("the value a policy patched in breaks a constraint: %s", msg)}
		}
	}
	return nil
}

// schemaMessage is a validation error's leaf messages on one line.
func schemaMessage(err error) string {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return err.Error()
	}
	var msgs []string
	for _, u := range verr.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		m := u.Error.String()
		if strings.HasPrefix(m, "validation failed") || strings.HasPrefix(m, "allOf failed") {
			continue
		}
		if u.InstanceLocation != "" {
			m = u.InstanceLocation + ": " + m
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return strings.TrimSpace(verr.Error())
	}
	return strings.Join(msgs, "; ")
}

// maxCachedSchemas bounds a schemaCache; past it the cache starts over.
const maxCachedSchemas = 1024

// compiledSchema is a constraint schema ready to validate with, and the
// summary narrows compares.
type compiledSchema struct {
	valid *jsonschema.Schema
	sum   *summary
}

// schemaCache holds compiled constraint schemas by their JSON text.
// Policies answer the same few schemas again and again, and compiling one
// (checking it against the metaschema) costs more than running a policy.
// It is safe for concurrent use; compiled schemas are immutable.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*compiledSchema
}

func newSchemaCache() *schemaCache { return &schemaCache{m: map[string]*compiledSchema{}} }

// compile returns the compiled schema, from the cache when it is there.
func (c *schemaCache) compile(schema any) (*compiledSchema, error) {
	b, err := json.Marshal(schema) // map keys sorted: one text per schema
	if err != nil {
		return nil, err
	}
	key := string(b)
	c.mu.Lock()
	s := c.m[key]
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseLoader(noLoader{})
	comp.AssertFormat()
	const url = "urn:steward:constraint"
	if err := comp.AddResource(url, schema); err != nil {
		return nil, err
	}
	valid, err := comp.Compile(url)
	if err != nil {
		return nil, err
	}
	s = &compiledSchema{valid: valid, sum: summarize(schema)}
	c.mu.Lock()
	if len(c.m) >= maxCachedSchemas {
		clear(c.m)
	}
	c.m[key] = s
	c.mu.Unlock()
	return s, nil
}

// noLoader refuses every URL: a constraint may only refer inside itself,
// never to a file or a server.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("constraint schemas may not load %s", url)
}
