package ctl

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/stewardhq/steward/pkg/client"
)

// A kind is one collection of the API, with the calls the commands make on
// it (nil where the API has no such call) and how a table shows it.
type kind struct {
	// name is the API collection: "catalog-item-instances".
	name string
	// aliases are the other names a command line may use: the singular,
	// short forms ("orders", "order", "items").
	aliases []string

	list   listCall
	get    getCall
	del    deleteCall
	create createCall
	update updateCall
	// replace says update is a PUT of the whole resource, not a merge patch.
	replace bool
	// createSchema and updateSchema name the request bodies' schemas in
	// api/openapi.yaml: apply sends only their members.
	createSchema, updateSchema string

	// columns are the table's; wide adds more for -o wide.
	columns, wide []column

	// acrossProjects says an admin may list every project's (get -A).
	acrossProjects bool
	// nameOf is -o name's KIND/ID for a kind whose path is not that.
	nameOf func(object) string
	// idParts is how many /-separated parts an id has (0 meaning 1): a
	// repair operation is APP_INSTANCE/OPERATION_ID.
	idParts int
}

// The calls a kind makes. Most are one generated client method adapted by
// the helpers below; a kind whose calls are not (app instances, tokens)
// writes its own.
type (
	listCall   func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error)
	getCall    func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error)
	deleteCall func(ctx context.Context, api client.ClientInterface, id, ifMatch string) (*http.Response, error)
	createCall func(ctx context.Context, api client.ClientInterface, id string, body io.Reader) (*http.Response, error)
	updateCall func(ctx context.Context, api client.ClientInterface, id, ifMatch string, body io.Reader) (*http.Response, error)
)

// The parameters the generated client takes for a conditional write and
// for a create. Every such call has its own named type of one of these
// shapes, so one helper can build the parameters of all of them.
type (
	ifMatchParams interface {
		~struct {
			IfMatch *client.IfMatch `json:"If-Match,omitempty"`
		}
	}
	createParams interface {
		~struct {
			Id             *client.ClientId       `form:"id,omitempty" json:"id,omitempty"`
			IdempotencyKey *client.IdempotencyKey `json:"Idempotency-Key,omitempty"`
		}
	}
)

// The helpers take the generated methods as method expressions,
// (client.ClientInterface).ListPolicies, so each kind names its calls and
// the way they are called is written once.

// lists calls a List method with no parameters: the filters and the
// paging come as request editors.
func lists[P any](list func(client.ClientInterface, context.Context, *P, ...client.RequestEditorFn) (*http.Response, error)) listCall {
	return func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
		return list(api, ctx, nil, eds...)
	}
}

// gets calls a Get method that takes only the id.
func gets(get func(client.ClientInterface, context.Context, string, ...client.RequestEditorFn) (*http.Response, error)) getCall {
	return func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
		return get(api, ctx, id)
	}
}

// getsWithoutParams calls a Get method that has optional parameters,
// leaving them out.
func getsWithoutParams[P any](get func(client.ClientInterface, context.Context, string, *P, ...client.RequestEditorFn) (*http.Response, error)) getCall {
	return func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
		return get(api, ctx, id, nil)
	}
}

// deletes calls a Delete method, with If-Match when the caller has an etag.
func deletes[P ifMatchParams](del func(client.ClientInterface, context.Context, string, *P, ...client.RequestEditorFn) (*http.Response, error)) deleteCall {
	return func(ctx context.Context, api client.ClientInterface, id, ifMatch string) (*http.Response, error) {
		return del(api, ctx, id, &P{IfMatch: opt(ifMatch)})
	}
}

// creates calls a Create method with a JSON body, asking for the id when
// the caller names one (else the server picks it).
func creates[P createParams](create func(client.ClientInterface, context.Context, *P, string, io.Reader, ...client.RequestEditorFn) (*http.Response, error)) createCall {
	return func(ctx context.Context, api client.ClientInterface, id string, body io.Reader) (*http.Response, error) {
		return create(api, ctx, &P{Id: opt(id)}, contentJSON, body)
	}
}

// mergePatches calls an Update method: the body is a JSON merge patch.
func mergePatches[P ifMatchParams](update func(client.ClientInterface, context.Context, string, *P, string, io.Reader, ...client.RequestEditorFn) (*http.Response, error)) updateCall {
	return writes(update, contentMerge)
}

// replaces calls a Replace method: the body is the whole resource (and
// the kind says replace, for apply).
func replaces[P ifMatchParams](update func(client.ClientInterface, context.Context, string, *P, string, io.Reader, ...client.RequestEditorFn) (*http.Response, error)) updateCall {
	return writes(update, contentJSON)
}

// writes sends an update's body as contentType, with If-Match when the
// caller has an etag.
func writes[P ifMatchParams](update func(client.ClientInterface, context.Context, string, *P, string, io.Reader, ...client.RequestEditorFn) (*http.Response, error), contentType string) updateCall {
	return func(ctx context.Context, api client.ClientInterface, id, ifMatch string, body io.Reader) (*http.Response, error) {
		return update(api, ctx, id, &P{IfMatch: opt(ifMatch)}, contentType, body)
	}
}

const (
	contentJSON  = "application/json"
	contentMerge = "application/merge-patch+json"
)

// opt is nil for "" (an absent optional parameter), else &s.
func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

var (
	ageCol     = column{"AGE", age("create_time")}
	idCol      = column{"ID", field("id")}
	etagCol    = column{"ETAG", field("etag")}
	updatedCol = column{"UPDATED", age("update_time")}
	projectCol = column{"PROJECT", field("project")}
)

// kinds is every collection the commands know, in the order `steward get`
// lists them.
var kinds = []*kind{
	{
		name: "providers", aliases: []string{"provider", "sp", "sps"},
		list:         lists((client.ClientInterface).ListProviders),
		get:          gets((client.ClientInterface).GetProvider),
		del:          deletes((client.ClientInterface).DeregisterProvider),
		create:       creates((client.ClientInterface).RegisterProviderWithBody),
		update:       mergePatches((client.ClientInterface).UpdateProviderWithBody),
		createSchema: "ProviderRegistration", updateSchema: "ProviderUpdate",
		columns: []column{{"NAME", field("id")}, {"STATUS", field("status")}, {"SERVICE TYPES", field("service_types")},
			{"ENDPOINT", field("endpoint")}, ageCol},
		wide: []column{{"FAILURES", field("health.consecutive_failures")}, {"LAST CHECK", age("health.last_check_time")},
			{"MESSAGE", field("health.message")}},
	},
	{
		name: "service-types", aliases: []string{"service-type", "types", "type", "st"},
		list:         lists((client.ClientInterface).ListServiceTypes),
		get:          gets((client.ClientInterface).GetServiceType),
		del:          deletes((client.ClientInterface).DeleteServiceType),
		create:       creates((client.ClientInterface).CreateServiceTypeWithBody),
		update:       replaces((client.ClientInterface).ReplaceServiceTypeWithBody),
		replace:      true,
		createSchema: "ServiceTypeInput", updateSchema: "ServiceTypeInput",
		columns: []column{idCol, {"LIFECYCLE", field("lifecycle")}, {"PARENT", field("parent_service_type")},
			{"BUILTIN", field("builtin")}, ageCol},
		wide: []column{{"REQUIRED ADAPTERS", field("required_adapters")}, {"ON PARENT DELETE", field("on_parent_delete")},
			{"RUNTIME", field("runtime.kind")}},
	},
	{
		name: "catalog-items", aliases: []string{"catalog-item", "items", "item", "ci"},
		list:         lists((client.ClientInterface).ListCatalogItems),
		get:          gets((client.ClientInterface).GetCatalogItem),
		del:          deletes((client.ClientInterface).DeleteCatalogItem),
		create:       creates((client.ClientInterface).CreateCatalogItemWithBody),
		update:       mergePatches((client.ClientInterface).UpdateCatalogItemWithBody),
		createSchema: "CatalogItemCreate", updateSchema: "CatalogItemUpdate",
		columns: []column{idCol, {"SERVICE TYPE", field("service_type")}, {"PROVIDERS", providersCell},
			{"DISPLAY NAME", field("display_name")}, ageCol},
		wide: []column{{"EDITABLE", editableFields}},
	},
	{
		name: "catalog-item-instances", aliases: []string{"catalog-item-instance", "orders", "order", "cii"},
		list:         lists((client.ClientInterface).ListCatalogItemInstances),
		get:          getsWithoutParams((client.ClientInterface).GetCatalogItemInstance),
		del:          deletes((client.ClientInterface).DeleteCatalogItemInstance),
		create:       creates((client.ClientInterface).CreateCatalogItemInstanceWithBody),
		update:       mergePatches((client.ClientInterface).UpdateCatalogItemInstanceWithBody),
		createSchema: "CatalogItemInstanceCreate", updateSchema: "CatalogItemInstanceUpdate",
		acrossProjects: true,
		columns: []column{idCol, {"CATALOG ITEM", field("catalog_item_id")}, {"STATE", field("state")},
			{"READY", ready}, {"HEALTH", health}, {"PROVIDER", field("provider_name")}, ageCol},
		wide: []column{{"SERVICE TYPE", field("service_type")}, {"VERSION", field("version")}, {"INSTANCE", field("instance_id")},
			{"PROJECT", field("project")}, {"LABELS", field("labels")}},
	},
	appInstances,
	repairOperations,
	{
		name: "service-type-instances", aliases: []string{"service-type-instance", "instances", "instance", "sti"},
		list: lists((client.ClientInterface).ListServiceTypeInstances),
		get:  getsWithoutParams((client.ClientInterface).GetServiceTypeInstance),
		// Its delete has one more parameter (deferred) than the others'.
		del: func(ctx context.Context, api client.ClientInterface, id, ifMatch string) (*http.Response, error) {
			return api.DeleteServiceTypeInstance(ctx, id, &client.DeleteServiceTypeInstanceParams{IfMatch: opt(ifMatch)})
		},
		create:       creates((client.ClientInterface).CreateServiceTypeInstanceWithBody),
		createSchema: "ServiceTypeInstanceCreate",
		columns: []column{idCol, {"NAME", field("name")}, {"SERVICE TYPE", field("service_type")},
			{"PROVIDER", field("provider_name")}, {"STATUS", field("status")}, ageCol},
		wide: []column{{"MESSAGE", field("status_message")}},
	},
	{
		name: "resources", aliases: []string{"resource", "res"},
		list: lists((client.ClientInterface).ListResources),
		get:  getsWithoutParams((client.ClientInterface).GetResource),
		columns: []column{idCol, {"ORDER", field("catalog_item_instance_id")}, {"SERVICE TYPE", field("service_type")},
			{"PROVIDER", field("provider_name")}, {"POLICY", field("policy_status")}, {"STATUS", field("status")}, ageCol},
		wide: []column{{"PROJECT", field("project")}, {"REHYDRATED FROM", field("rehydrated_from")}},
	},
	{
		name: "policies", aliases: []string{"policy", "pol"},
		list:         lists((client.ClientInterface).ListPolicies),
		get:          gets((client.ClientInterface).GetPolicy),
		del:          deletes((client.ClientInterface).DeletePolicy),
		create:       creates((client.ClientInterface).CreatePolicyWithBody),
		update:       mergePatches((client.ClientInterface).UpdatePolicyWithBody),
		createSchema: "PolicyCreate", updateSchema: "PolicyUpdate",
		columns: []column{idCol, {"TYPE", field("policy_type")}, {"PRIORITY", field("priority")},
			{"ENABLED", field("enabled")}, {"DISPLAY NAME", field("display_name")}, ageCol},
		wide: []column{{"SELECTOR", field("label_selector")}},
	},
	{
		name: "lifecycles", aliases: []string{"lifecycle", "lc"},
		list:         lists((client.ClientInterface).ListLifecycles),
		get:          gets((client.ClientInterface).GetLifecycle),
		del:          deletes((client.ClientInterface).DeleteLifecycle),
		create:       creates((client.ClientInterface).CreateLifecycleWithBody),
		update:       replaces((client.ClientInterface).ReplaceLifecycleWithBody),
		replace:      true,
		createSchema: "LifecycleInput", updateSchema: "LifecycleInput",
		columns: []column{idCol, {"INITIAL STATE", field("initial_state")}, {"STATES", count("states")},
			{"TRANSFERS", count("transfers")}, {"BUILTIN", field("builtin")}, ageCol},
	},
	{
		name: "operations", aliases: []string{"operation", "ops", "op"},
		list: lists((client.ClientInterface).ListOperations),
		get:  gets((client.ClientInterface).GetOperation),
		columns: []column{idCol, {"KIND", field("metadata.kind")}, {"TARGET", field("metadata.target")},
			{"DONE", field("done")}, {"ERROR", field("error.reason")}, ageCol},
		wide: []column{{"STEP", field("metadata.step")}, updatedCol},
	},
	{
		name: "cleanup-tasks", aliases: []string{"cleanup-task", "cleanups", "cleanup", "ct"},
		list: lists((client.ClientInterface).ListCleanupTasks),
		get:  gets((client.ClientInterface).GetCleanupTask),
		columns: []column{idCol, {"INSTANCE", field("instance_id")}, {"PROVIDER", field("provider_name")},
			{"STATUS", field("status")}, {"RETRIES", field("retry_count")}, ageCol},
		wide: []column{{"SERVICE TYPE", field("service_type")}, {"LAST ERROR", field("last_error")}},
	},
	{
		name: "audit-events", aliases: []string{"audit-event", "audit"},
		list: lists((client.ClientInterface).ListAuditEvents),
		columns: []column{{"TIME", field("time")}, {"ACTOR", field("actor.id")}, {"ACTION", field("action")},
			{"TARGET", field("target")}, {"OUTCOME", field("outcome")}},
		wide: []column{idCol, {"PROJECT", field("project")}, {"REQUEST", field("request_id")}},
	},
	{
		name: "tokens", aliases: []string{"token"},
		list: lists((client.ClientInterface).ListTokens),
		get:  gets((client.ClientInterface).GetToken),
		del: func(ctx context.Context, api client.ClientInterface, id, _ string) (*http.Response, error) {
			return api.RevokeToken(ctx, id)
		},
		columns: []column{idCol, {"NAME", field("name")}, {"ROLE", field("role")}, {"PROJECT", field("project")},
			{"STATE", field("state")}, ageCol},
		wide: []column{{"EXPIRES", field("expire_time")}, {"CREATED BY", field("created_by")}},
	},
}

// findKind resolves a command line's kind name, or says which exist.
func findKind(name string) (*kind, error) {
	n := strings.ToLower(name)
	for _, k := range kinds {
		if k.name == n || slices.Contains(k.aliases, n) {
			return k, nil
		}
	}
	var words []string
	for _, k := range kinds {
		words = append(append(words, k.name), k.aliases...)
	}
	var near []string
	seen := map[*kind]bool{}
	for _, w := range closest(name, words, len(words)) {
		if k := kindOf(w); !seen[k] && len(near) < 2 {
			seen[k] = true
			near = append(near, w)
		}
	}
	return nil, usagef("unknown kind %q%s; the kinds are %s", name, didYouMean(near), kindList())
}

// kindOf is the kind a name or alias names.
func kindOf(word string) *kind {
	for _, k := range kinds {
		if k.name == word || slices.Contains(k.aliases, word) {
			return k
		}
	}
	return nil
}

// kindList names every kind with its short aliases, as an unknown kind's
// message lists them: "catalog-item-instances (orders, cii), …". The
// singulars are left out: each is its plural without the s.
func kindList() string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		all := append([]string{k.name}, k.aliases...)
		var short []string
		for _, a := range k.aliases {
			if !slices.Contains(all, a+"s") && !slices.Contains(all, strings.TrimSuffix(a, "y")+"ies") {
				short = append(short, a)
			}
		}
		parts[i] = k.name
		if len(short) > 0 {
			parts[i] += " (" + strings.Join(short, ", ") + ")"
		}
	}
	return strings.Join(parts, ", ")
}

func kindNames() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

// kindsWith are the names of the kinds that have the call has reports.
func kindsWith(has func(*kind) bool) []string {
	var names []string
	for _, k := range kinds {
		if has(k) {
			names = append(names, k.name)
		}
	}
	sort.Strings(names)
	return names
}
