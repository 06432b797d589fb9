package catalog

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"
)

// Values of [ServiceType] fields that API.md names.
const (
	// LifecycleSimple is the built-in lifecycle every built-in service type uses.
	LifecycleSimple = "simple"
	// LifecycleService is LSM's full built-in lifecycle, with approval
	// gates.
	LifecycleService = "service"
	// OnParentDeleteCascade deletes an instance when its parent is deleted.
	OnParentDeleteCascade = "cascade"
	// OnParentDeleteRestrict refuses to delete a parent that has instances.
	OnParentDeleteRestrict = "restrict"
	// RuntimeKindKubernetes is a runtime whose members are repaired or
	// reconciled, never restarted.
	RuntimeKindKubernetes = "kubernetes"
	// RuntimeKindSimple is a runtime that can be restarted as a whole.
	RuntimeKindSimple = "simple"
)

// ServiceType is a kind of service Steward can provision (vm, container,
// database, cluster, or one an administrator defines): the JSON Schema
// 2020-12 document every spec of the type must satisfy, and how its
// instances live. It is the service-types resource of API.md.
//
// A property of Schema may carry "x-modifier": "r" (set only by the server or
// provider), "rw" (set at creation, read-only after; the default) or "rw+"
// (updatable while the lifecycle state allows it).
//
// A ServiceType returned by [ServiceTypes] is a copy: changing it does not
// change the registry.
type ServiceType struct {
	// ID names the type, as in spec.service_type ("vm").
	ID string `json:"id"`
	// Schema is the JSON Schema 2020-12 document specs are validated against.
	Schema json.RawMessage `json:"schema"`
	// Lifecycle is the id of the lifecycle orders of this type follow.
	Lifecycle string `json:"lifecycle"`
	// IdentityAttribute, when set, is the spec attribute whose value is
	// unique among the type's instances and names one in place of its id
	// (LSM's service identity); nil when the id suffices.
	IdentityAttribute *string `json:"identity_attribute"`
	// ParentServiceType, when set, is the type an instance must be nested in.
	ParentServiceType *string `json:"parent_service_type"`
	// OnParentDelete says what deleting the parent does to an instance:
	// [OnParentDeleteCascade].
	OnParentDelete string `json:"on_parent_delete"`
	// RequiredAdapters lists the adapters that must report on every instance
	// before it counts as realised, or as cleaned up on delete. Marshalled as
	// [] when empty.
	RequiredAdapters []string `json:"required_adapters"`
	// Runtime is set for app instances that have a runtime (repair seed);
	// nil otherwise.
	Runtime *Runtime `json:"runtime"`
	// Builtin marks the types Steward ships (vm, container, database,
	// cluster), which cannot be changed or deleted.
	Builtin bool `json:"builtin"`
	// Version counts the type's changes; its ETag.
	Version    int64     `json:"-"`
	CreateTime time.Time `json:"create_time"`
	UpdateTime time.Time `json:"update_time"`
}

// Runtime describes the runtime an app instance runs on, which decides how
// it is restarted or repaired (API.md Repair).
type Runtime struct {
	// Kind is [RuntimeKindKubernetes] or [RuntimeKindSimple].
	Kind string `json:"kind"`
	// Members says whether the runtime has members (nodes, replicas) that a
	// repair can target one by one.
	Members bool `json:"members"`
}

// MarshalJSON writes st in API.md's shape: every field present, absent
// pointers as null and no adapters as [].
func (st ServiceType) MarshalJSON() ([]byte, error) {
	type plain ServiceType // plain has no MarshalJSON, so this does not recurse.
	p := plain(st)
	if p.RequiredAdapters == nil {
		p.RequiredAdapters = []string{}
	}
	return json.Marshal(p)
}

// clone returns a deep copy of st, so the registry's copy cannot be changed
// through a value it handed out.
func (st ServiceType) clone() ServiceType {
	st.Schema = bytes.Clone(st.Schema)
	st.IdentityAttribute = clonePtr(st.IdentityAttribute)
	st.ParentServiceType = clonePtr(st.ParentServiceType)
	st.RequiredAdapters = slices.Clone(st.RequiredAdapters)
	st.Runtime = clonePtr(st.Runtime)
	return st
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
