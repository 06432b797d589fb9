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

	list   func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error)
	get    func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error)
	del    func(ctx context.Context, api client.ClientInterface, id, ifMatch string) (*http.Response, error)
	create func(ctx context.Context, api client.ClientInterface, id string, body io.Reader) (*http.Response, error)
	update func(ctx context.Context, api client.ClientInterface, id, ifMatch string, body io.Reader) (*http.Response, error)
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
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListProviders(ctx, nil, eds...)
		},
		get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
			return api.GetProvider(ctx, id)
		},
		del: func(ctx context.Context, api client.ClientInterface, id, ifMatch string) (*http.Response, error) {
			return api.DeregisterProvider(ctx, id, &client.DeregisterProviderParams{IfMatch: opt(ifMatch)})
		},
		create: func(ctx context.Context, api client.ClientInterface, id string, body io.Reader) (*http.Response, error) {
			return api.RegisterProviderWithBody(ctx, &client.RegisterProviderParams{Id: opt(id)}, contentJSON, body)
		},
		update: func(ctx context.Context, api client.ClientInterface, id, ifMatch string, body io.Reader) (*http.Response, error) {
			return api.UpdateProviderWithBody(ctx, id, &client.UpdateProviderParams{IfMatch: opt(ifMatch)}, contentMerge, body)
		},
		createSchema: "ProviderRegistration", updateSchema: "ProviderUpdate",
		columns: []column{{"NAME", field("id")}, {"STATUS", field("status")}, {"SERVICE TYPES", field("service_types")},
			{"ENDPOINT", field("endpoint")}, ageCol},
		wide: []column{{"FAILURES", field("health.consecutive_failures")}, {"LAST CHECK", age("health.last_check_time")},
			{"MESSAGE", field("health.message")}},
	},
	{
		name: "service-types", aliases: []string{"service-type", "types", "type", "st"},
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListServiceTypes(ctx, nil, eds...)
		},
		get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
			return api.GetServiceType(ctx, id)
		},
		del: func(ctx context.Context, api client.ClientInterface, id, ifMatch string) (*http.Response, error) {
			return api.DeleteServiceType(ctx, id, &client.DeleteServiceTypeParams{IfMatch: opt(ifMatch)})
		},
		create: func(ctx context.Context, api client.ClientInterface, id string, body io.Reader) (*http.Response, error) {
			return api.CreateServiceTypeWithBody(ctx, &client.CreateServiceTypeParams{Id: opt(id)}, contentJSON, body)
		},
		update: func(ctx context.Context, api client.ClientInterface, id, ifMatch string, body io.Reader) (*http.Response, error) {
			return api.ReplaceServiceTypeWithBody(ctx, id, &client.ReplaceServiceTypeParams{IfMatch: opt(ifMatch)}, contentJSON, body)
		},
		replace:      true,
		createSchema: "ServiceTypeInput", updateSchema: "ServiceTypeInput",
		columns: []column{idCol, {"LIFECYCLE", field("lifecycle")}, {"PARENT", field("parent_service_type")},
			{"BUILTIN", field("builtin")}, ageCol},
		wide: []column{{"REQUIRED ADAPTERS", field("required_adapters")}, {"ON PARENT DELETE", field("on_parent_delete")},
			{"RUNTIME", field("runtime.kind")}},
	},
	{
		name: "catalog-items", aliases: []string{"catalog-item", "items", "item", "ci"},
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListCatalogItems(ctx, nil, eds...)
		},
		get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
			return api.GetCatalogItem(ctx, id)
		},
		del: func(ctx context.Context, api client.ClientInterface, id, ifMatch string) (*http.Response, error) {
			return api.DeleteCatalogItem(ctx, id, &client.DeleteCatalogItemParams{IfMatch: opt(ifMatch)})
		},
		create: func(ctx context.Context, api client.ClientInterface, id string, body io.Reader) (*http.Response, error) {
			return api.CreateCatalogItemWithBody(ctx, &client.CreateCatalogItemParams{Id: opt(id)}, contentJSON, body)
		},
		update: func(ctx context.Context, api client.ClientInterface, id, ifMatch string, body io.Reader) (*http.Response, error) {
			return api.UpdateCatalogItemWithBody(ctx, id, &client.UpdateCatalogItemParams{IfMatch: opt(ifMatch)}, contentMerge, body)
		},
		createSchema: "CatalogItemCreate", updateSchema: "CatalogItemUpdate",
		columns: []column{idCol, {"SERVICE TYPE", field("service_type")}, {"PROVIDERS", providersCell},
			{"DISPLAY NAME", field("display_name")}, ageCol},
		wide: []column{{"EDITABLE", editableFields}},
	},
	{
		name: "catalog-item-instances", aliases: []string{"catalog-item-instance", "orders", "order", "cii"},
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListCatalogItemInstances(ctx, nil, eds...)
		},
		get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
			return api.GetCatalogItemInstance(ctx, id, nil)
		},
		del: func(ctx context.Context, api client.ClientInterface, id, ifMatch string) (*http.Response, error) {
			return api.DeleteCatalogItemInstance(ctx, id, &client.DeleteCatalogItemInstanceParams{IfMatch: opt(ifMatch)})
		},
		create: func(ctx context.Context, api client.ClientInterface, id string, body io.Reader) (*http.Response, error) {
			return api.CreateCatalogItemInstanceWithBody(ctx, &client.CreateCatalogItemInstanceParams{Id: opt(id)}, contentJSON, body)
		},
		update: func(ctx context.Context, api client.ClientInterface, id, ifMatch string, body io.Reader) (*http.Response, error) {
			return api.UpdateCatalogItemInstanceWithBody(ctx, id, &client.UpdateCatalogItemInstanceParams{IfMatch: opt(ifMatch)}, contentMerge, body)
		},
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
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListServiceTypeInstances(ctx, nil, eds...)
		},
		get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
			return api.GetServiceTypeInstance(ctx, id, nil)
		},
		del: func(ctx context.Context, api client.ClientInterface, id, ifMatch string) (*http.Response, error) {
			return api.DeleteServiceTypeInstance(ctx, id, &client.DeleteServiceTypeInstanceParams{IfMatch: opt(ifMatch)})
		},
		create: func(ctx context.Context, api client.ClientInterface, id string, body io.Reader) (*http.Response, error) {
			return api.CreateServiceTypeInstanceWithBody(ctx, &client.CreateServiceTypeInstanceParams{Id: opt(id)}, contentJSON, body)
		},
		createSchema: "ServiceTypeInstanceCreate",
		columns: []column{idCol, {"NAME", field("name")}, {"SERVICE TYPE", field("service_type")},
			{"PROVIDER", field("provider_name")}, {"STATUS", field("status")}, ageCol},
		wide: []column{{"MESSAGE", field("status_message")}},
	},
	{
		name: "resources", aliases: []string{"resource", "res"},
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListResources(ctx, nil, eds...)
		},
		get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
			return api.GetResource(ctx, id, nil)
		},
		columns: []column{idCol, {"ORDER", field("catalog_item_instance_id")}, {"SERVICE TYPE", field("service_type")},
			{"PROVIDER", field("provider_name")}, {"POLICY", field("policy_status")}, {"STATUS", field("status")}, ageCol},
		wide: []column{{"PROJECT", field("project")}, {"REHYDRATED FROM", field("rehydrated_from")}},
	},
	{
		name: "policies", aliases: []string{"policy", "pol"},
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListPolicies(ctx, nil, eds...)
		},
		get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
			return api.GetPolicy(ctx, id)
		},
		del: func(ctx context.Context, api client.ClientInterface, id, ifMatch string) (*http.Response, error) {
			return api.DeletePolicy(ctx, id, &client.DeletePolicyParams{IfMatch: opt(ifMatch)})
		},
		create: func(ctx context.Context, api client.ClientInterface, id string, body io.Reader) (*http.Response, error) {
			return api.CreatePolicyWithBody(ctx, &client.CreatePolicyParams{Id: opt(id)}, contentJSON, body)
		},
		update: func(ctx context.Context, api client.ClientInterface, id, ifMatch string, body io.Reader) (*http.Response, error) {
			return api.UpdatePolicyWithBody(ctx, id, &client.UpdatePolicyParams{IfMatch: opt(ifMatch)}, contentMerge, body)
		},
		createSchema: "PolicyCreate", updateSchema: "PolicyUpdate",
		columns: []column{idCol, {"TYPE", field("policy_type")}, {"PRIORITY", field("priority")},
			{"ENABLED", field("enabled")}, {"DISPLAY NAME", field("display_name")}, ageCol},
		wide: []column{{"SELECTOR", field("label_selector")}},
	},
	{
		name: "lifecycles", aliases: []string{"lifecycle", "lc"},
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListLifecycles(ctx, nil, eds...)
		},
		get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
			return api.GetLifecycle(ctx, id)
		},
		del: func(ctx context.Context, api client.ClientInterface, id, ifMatch string) (*http.Response, error) {
			return api.DeleteLifecycle(ctx, id, &client.DeleteLifecycleParams{IfMatch: opt(ifMatch)})
		},
		create: func(ctx context.Context, api client.ClientInterface, id string, body io.Reader) (*http.Response, error) {
			return api.CreateLifecycleWithBody(ctx, &client.CreateLifecycleParams{Id: opt(id)}, contentJSON, body)
		},
		update: func(ctx context.Context, api client.ClientInterface, id, ifMatch string, body io.Reader) (*http.Response, error) {
			return api.ReplaceLifecycleWithBody(ctx, id, &client.ReplaceLifecycleParams{IfMatch: opt(ifMatch)}, contentJSON, body)
		},
		replace:      true,
		createSchema: "LifecycleInput", updateSchema: "LifecycleInput",
		columns: []column{idCol, {"INITIAL STATE", field("initial_state")}, {"STATES", count("states")},
			{"TRANSFERS", count("transfers")}, {"BUILTIN", field("builtin")}, ageCol},
	},
	{
		name: "operations", aliases: []string{"operation", "ops", "op"},
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListOperations(ctx, nil, eds...)
		},
		get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
			return api.GetOperation(ctx, id)
		},
		columns: []column{idCol, {"KIND", field("metadata.kind")}, {"TARGET", field("metadata.target")},
			{"DONE", field("done")}, {"ERROR", field("error.reason")}, ageCol},
		wide: []column{{"STEP", field("metadata.step")}, updatedCol},
	},
	{
		name: "cleanup-tasks", aliases: []string{"cleanup-task", "cleanups", "cleanup", "ct"},
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListCleanupTasks(ctx, nil, eds...)
		},
		get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
			return api.GetCleanupTask(ctx, id)
		},
		columns: []column{idCol, {"INSTANCE", field("instance_id")}, {"PROVIDER", field("provider_name")},
			{"STATUS", field("status")}, {"RETRIES", field("retry_count")}, ageCol},
		wide: []column{{"SERVICE TYPE", field("service_type")}, {"LAST ERROR", field("last_error")}},
	},
	{
		name: "audit-events", aliases: []string{"audit-event", "audit"},
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListAuditEvents(ctx, nil, eds...)
		},
		columns: []column{{"TIME", field("time")}, {"ACTOR", field("actor.id")}, {"ACTION", field("action")},
			{"TARGET", field("target")}, {"OUTCOME", field("outcome")}},
		wide: []column{idCol, {"PROJECT", field("project")}, {"REQUEST", field("request_id")}},
	},
	{
		name: "tokens", aliases: []string{"token"},
		list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
			return api.ListTokens(ctx, nil, eds...)
		},
		get: func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error) {
			return api.GetToken(ctx, id)
		},
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
