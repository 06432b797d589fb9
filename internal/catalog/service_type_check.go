package catalog

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/schema"
)

// adapterNamePattern is the rule for a required adapter's name: a lowercase
// DNS label, since adapters report under it in a URL path.
var adapterNamePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// identityTypes are the JSON Schema types an identity attribute may have
// (LSM: string or int).
var identityTypes = []string{"string", "integer"}

// normalizeServiceType fills the defaults of an unset field: lifecycle
// simple, on_parent_delete cascade, no adapters.
func normalizeServiceType(st *ServiceType) {
	if st.Lifecycle == "" {
		st.Lifecycle = LifecycleSimple
	}
	if st.OnParentDelete == "" {
		st.OnParentDelete = OnParentDeleteCascade
	}
	if st.RequiredAdapters == nil {
		st.RequiredAdapters = []string{}
	}
}

// checkServiceType checks a service type to be stored, without what needs
// the store (its lifecycle and parent exist): the schema is a JSON Schema
// 2020-12 document with an object root whose x-modifier values are known,
// the identity attribute is a required rw property of type string or
// integer, and the enumerations and adapter names are valid. It returns an
// [*invalid.Error] naming each bad field.
func checkServiceType(st ServiceType) error {
	var errs invalid.Errors
	if len(st.Schema) == 0 {
		errs.Add("schema", "is required")
		return errs.Err()
	}
	compiled, err := schema.Compile(st.Schema)
	if err := addInvalid(&errs, err); err != nil {
		return err
	}
	if compiled != nil {
		checkObjectRoot(&errs, compiled)
		checkIdentity(&errs, compiled, st.IdentityAttribute)
	}
	if !slices.Contains([]string{OnParentDeleteCascade, OnParentDeleteRestrict}, st.OnParentDelete) {
		errs.Add("on_parent_delete", "must be %q or %q", OnParentDeleteCascade, OnParentDeleteRestrict)
	}
	if st.ParentServiceType != nil && *st.ParentServiceType == st.ID {
		errs.Add("parent_service_type", "cannot be the type itself")
	}
	seen := map[string]int{}
	for i, a := range st.RequiredAdapters {
		field := fmt.Sprintf("required_adapters[%d]", i)
		if !adapterNamePattern.MatchString(a) {
			errs.Add(field, "must match %s", adapterNamePattern)
		} else if j, dup := seen[a]; dup {
			errs.Add(field, "duplicates required_adapters[%d]", j)
		}
		seen[a] = i
	}
	if rt := st.Runtime; rt != nil && rt.Kind != RuntimeKindKubernetes && rt.Kind != RuntimeKindSimple {
		errs.Add("runtime.kind", "must be %q or %q", RuntimeKindKubernetes, RuntimeKindSimple)
	}
	return errs.Err()
}

// checkObjectRoot requires the schema to describe objects: a spec is one.
func checkObjectRoot(errs *invalid.Errors, s *schema.Schema) {
	if !s.RootIsObject() {
		errs.Add("schema.type", `must be "object": a service type's attributes are an object`)
	}
}

// checkIdentity checks the identity attribute (LSM's service identity): a
// top-level property the schema requires, of modifier rw (set once, never
// changed, so it can name the instance for good) and of type string or
// integer.
func checkIdentity(errs *invalid.Errors, s *schema.Schema, identity *string) {
	if identity == nil {
		return
	}
	name := *identity
	prop, ok := s.Property(name)
	switch {
	case name == "":
		errs.Add("identity_attribute", "must name a property, or be null")
	case !ok:
		errs.Add("identity_attribute", "must name a property the schema declares; %q is not one", name)
	case s.Modifier(schema.Key(name)) != schema.ModifierRW:
		errs.Add("identity_attribute", `must be an "rw" property (set at creation, never changed); %q is %q`,
			name, s.Modifier(schema.Key(name)))
	case !s.Required(name):
		errs.Add("identity_attribute", "must be a required property; add %q to the schema's required list", name)
	case !slices.Contains(identityTypes, fmt.Sprint(prop["type"])):
		errs.Add("identity_attribute", `must be a property of type "string" or "integer"`)
	}
}

// lifecycleIDPattern keeps lifecycle ids to the API's id rule.
var lifecycleIDPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// checkReferences checks what a stored type names: its lifecycle exists
// (a built-in or a stored one), and its parent type exists and does not
// lead back to it (no cycle). parentOf reads a stored type's parent.
func (s *Service) checkReferences(ctx context.Context, st ServiceType,
	parentOf func(id string) (*string, error)) error {
	var errs invalid.Errors
	if !lifecycleIDPattern.MatchString(st.Lifecycle) {
		errs.Add("lifecycle", "must match %s", lifecycleIDPattern)
	} else if err := s.checkLifecycle(ctx, st.Lifecycle); errors.Is(err, ErrUnknownLifecycle) {
		errs.Add("lifecycle", "must name an existing lifecycle; %q is not one", st.Lifecycle)
	} else if err != nil {
		return err
	}
	if st.ParentServiceType != nil && *st.ParentServiceType != st.ID {
		// Walk up from the parent; meeting st.ID again is a cycle.
		seen := map[string]bool{st.ID: true}
		for cur := st.ParentServiceType; cur != nil; {
			if seen[*cur] {
				errs.Add("parent_service_type", "makes a cycle: %q is its own ancestor", st.ID)
				break
			}
			seen[*cur] = true
			next, err := parentOf(*cur)
			if errors.Is(err, ErrServiceTypeNotFound) {
				if cur == st.ParentServiceType {
					errs.Add("parent_service_type", "must name an existing service type; %q is not one", *cur)
				}
				break
			}
			if err != nil {
				return err
			}
			cur = next
		}
	}
	return errs.Err()
}
