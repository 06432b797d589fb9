package schema

import (
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/message"
)

// Steward's schema keywords. Other validators ignore them, so a service
// type schema stays a portable JSON Schema document.
const (
	// keywordModifier marks who may set a property and when (API.md):
	// "r" the server or provider only, "rw" at creation (the default), "rw+"
	// also later. The validator checks only its value; the order flow
	// enforces it.
	keywordModifier = "x-modifier"
	// keywordUniqueBy on an array names a property that must differ between
	// its object items (disk names, environment variable names), which plain
	// JSON Schema cannot say: uniqueItems compares whole items.
	keywordUniqueBy = "x-unique-by"
)

// stewardVocabularies returns the vocabularies of Steward's keywords. They
// are built once; a compiled vocabulary is only read afterwards, so every
// compiler may share it.
var stewardVocabularies = sync.OnceValues(func() ([]*jsonschema.Vocabulary, error) {
	modifier, err := vocabulary("modifier", `{
		"properties": {"`+keywordModifier+`": {"enum": ["r", "rw", "rw+"]}}
	}`, func(*jsonschema.CompilerContext, map[string]any) (jsonschema.SchemaExt, error) {
		return nil, nil // checked by the vocabulary's schema; nothing to validate in specs.
	})
	if err != nil {
		return nil, err
	}
	uniqueBy, err := vocabulary("unique-by", `{
		"properties": {"`+keywordUniqueBy+`": {"type": "string", "minLength": 1}}
	}`, compileUniqueBy)
	if err != nil {
		return nil, err
	}
	return []*jsonschema.Vocabulary{modifier, uniqueBy}, nil
})

// vocabulary builds a vocabulary whose keywords' values are checked by the
// schema metaschema when a service type schema is compiled.
func vocabulary(name, metaschema string, compile func(*jsonschema.CompilerContext, map[string]any) (jsonschema.SchemaExt, error)) (*jsonschema.Vocabulary, error) {
	url := "steward:///vocabularies/" + name
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(metaschema))
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", name, err)
	}
	return &jsonschema.Vocabulary{URL: url, Schema: sch, Compile: compile}, nil
}

func compileUniqueBy(_ *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
	key, ok := obj[keywordUniqueBy].(string)
	if !ok {
		return nil, nil
	}
	return uniqueBy{key: key}, nil
}

// uniqueBy validates x-unique-by.
type uniqueBy struct {
	key string
}

// Validate reports every object item whose key equals an earlier item's.
// Items that are not objects or lack the key are left to the other keywords.
func (u uniqueBy) Validate(ctx *jsonschema.ValidatorContext, v any) {
	arr, ok := v.([]any)
	if !ok {
		return
	}
	var keys []any
	var at []int // at[n] is the index in arr of keys[n]
	for i, item := range arr {
		obj, ok := item.(map[string]any)
		if !ok {
			continue
		}
		key, ok := obj[u.key]
		if !ok {
			continue
		}
		for n, earlier := range keys {
			// Equals compares JSON values, so 80 and 80.0 are the same port.
			if eq, err := ctx.Equals(earlier, key); err == nil && eq {
				ctx.AddError(&duplicateKey{Key: u.key, First: at[n], Duplicate: i})
				break
			}
		}
		keys = append(keys, key)
		at = append(at, i)
	}
}

// duplicateKey is the [jsonschema.ErrorKind] of an x-unique-by failure. It
// is reported at the array; the field path points at the duplicate's key.
type duplicateKey struct {
	Key       string
	First     int
	Duplicate int
}

func (*duplicateKey) KeywordPath() []string { return []string{keywordUniqueBy} }

func (k *duplicateKey) LocalizedString(p *message.Printer) string {
	return p.Sprintf("items at %d and %d have the same %s", k.First, k.Duplicate, k.Key)
}
