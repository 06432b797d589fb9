package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stewardhq/steward/internal/invalid"
)

// Draft2020 is the only dialect a service type schema may declare: API.md
// says "JSON Schema 2020-12", and one dialect keeps x-modifier and the error
// paths meaning the same thing in every schema.
const Draft2020 = "https://json-schema.org/draft/2020-12/schema"

// schemaURL is the address a schema is compiled under. Nothing is ever
// fetched from it.
const schemaURL = "steward:///service-type.json"

// Check reports whether schema is a service type schema Steward can
// validate specs with: a JSON object that is a valid JSON Schema 2020-12
// document (a "$schema" member, if any, must name 2020-12), whose regular
// expressions compile in Go's RE2 syntax (no lookaround) and whose "$ref"s
// resolve inside the document. It
// returns nil or an [*invalid.Error] whose fields start with "schema", so a
// service type whose schema is bad is answered 400.
//
// A "$ref" to any other document is refused, not fetched: a stored schema
// must not make Steward read local files or call out to the network.
// Unknown keywords are ignored, except that "x-modifier" must be "r", "rw" or
// "rw+" and "x-unique-by" must name a property.
func Check(schema json.RawMessage) error {
	_, err := Compile(schema)
	return err
}

// Schema is a schema ready to validate specs. It is immutable and
// safe for concurrent use. Build it with [Compile].
type Schema struct {
	schema *jsonschema.Schema
	// doc is the decoded document, where error messages look up the
	// description of a "contains" schema.
	doc any
}

// Compile compiles raw as [Check] describes, or returns Check's error.
func Compile(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, invalid.New("schema", "must be a JSON document: %v", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, invalid.New("schema", "must be a JSON object")
	}
	if dialect, ok := obj["$schema"]; ok && dialect != Draft2020 && dialect != Draft2020+"#" {
		return nil, invalid.New("schema.$schema", "must be %q or absent", Draft2020)
	}
	vocabs, err := stewardVocabularies()
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	// Formats ("email", "ipv4", ...) are only annotations in 2020-12 unless
	// asked for; a schema author who writes one expects it checked.
	c.AssertFormat()
	// Our keywords apply without a custom metaschema declaring them.
	c.AssertVocabs()
	for _, v := range vocabs {
		c.RegisterVocabulary(v)
	}
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("add schema resource: %w", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, compileError(err, doc)
	}
	return &Schema{schema: sch, doc: doc}, nil
}

// validate checks the JSON value v and returns nil or an [*invalid.Error]
// naming each failing location under field (for example "spec").
func (s *Schema) Validate(field string, v any) error {
	return s.check(flattener{root: field, doc: s.doc}, v)
}

// ValidateFragment is Validate for a value that may still lack parts (a
// catalog item's defaults): failures that only say something is missing
// are not errors.
func (s *Schema) ValidateFragment(field string, v any) error {
	return s.check(flattener{root: field, doc: s.doc, open: true}, v)
}

// check validates v and flattens the failures with f, whose inst it sets.
func (s *Schema) check(f flattener, v any) error {
	field := f.root
	v, err := jsonValue(v)
	if err != nil {
		return fmt.Errorf("validate %s: %w", field, err)
	}
	err = s.schema.Validate(v)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return fmt.Errorf("validate %s: %w", field, err)
	}
	f.inst = v
	fields := f.fields(verr)
	if len(fields) == 0 {
		return nil // only missing parts, in a fragment
	}
	return &invalid.Error{Fields: fields}
}

// compileError turns a compiler error into a 400 naming the schema. A
// schema that breaks the metaschema gets one field per failing location
// ("schema.properties.count.type").
func compileError(err error, doc any) error {
	var metaErr *jsonschema.SchemaValidationError
	var verr *jsonschema.ValidationError
	if errors.As(err, &metaErr) && errors.As(metaErr.Err, &verr) {
		return &invalid.Error{Fields: fieldErrors(verr, "schema", doc, nil)}
	}
	var loadErr *jsonschema.LoadURLError
	if errors.As(err, &loadErr) {
		return invalid.New("schema", "cannot reference %q: only references inside the schema are allowed", loadErr.URL)
	}
	// The compiler names locations by URL; the client knows them as
	// pointers into the schema it sent.
	msg := strings.ReplaceAll(err.Error(), schemaURL, "")
	msg = strings.TrimPrefix(msg, "jsonschema: ")
	return invalid.New("schema", "%s", msg)
}

// noLoader refuses to load any document, so "$ref" resolves only inside the
// schema itself (and against the embedded metaschemas).
type noLoader struct{}

func (noLoader) Load(string) (any, error) {
	return nil, errExternalRef
}

var errExternalRef = errors.New("only references inside the schema are allowed")

// jsonValue returns v as the validator needs it: only the types
// encoding/json decodes into (a spec built in Go may hold, say, a
// map[string]string). A value that already is one is returned unchanged.
func jsonValue(v any) (any, error) {
	if isJSONValue(v) {
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func isJSONValue(v any) bool {
	switch v := v.(type) {
	case nil, bool, string, float64, json.Number:
		return true
	case int, int32, int64, uint, uint32, uint64:
		return true
	case []any:
		for _, e := range v {
			if !isJSONValue(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range v {
			if !isJSONValue(e) {
				return false
			}
		}
		return true
	default:
		return false
	}
}
