package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/pkg/client"
)

var (
	orders        = mustKind("catalog-item-instances")
	operations    = mustKind("operations")
	catalogItems  = mustKind("catalog-items")
	providersKind = mustKind("providers")
)

func mustKind(name string) *kind {
	k, err := findKind(name)
	if err != nil {
		panic(err)
	}
	return k
}

// parseSet reads a --set PATH=VALUE: VALUE as JSON when it parses
// (2, true, ["300"], {"a":1}), else as the string it is (small).
func parseSet(s string) (client.UserValue, error) {
	path, raw, ok := strings.Cut(s, "=")
	if !ok || path == "" {
		return client.UserValue{}, usagef("--set %q: want PATH=VALUE, e.g. --set vcpu.count=2 or --set 'process.args=[\"300\"]'", s)
	}
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() || v == nil {
		return client.UserValue{Path: path, Value: raw}, nil
	}
	return client.UserValue{Path: path, Value: v}, nil
}

// orderCmd is `steward order ITEM`: a new order of a catalog item.
func (e *env) orderCmd() *cobra.Command {
	var (
		cf                    connFlags
		wf                    waitFlags
		sets, labels          []string
		id, name, parent, out string
		wait                  bool
	)
	cmd := &cobra.Command{
		Use:   "order CATALOG_ITEM [--set PATH=VALUE ...]",
		Short: "Order a catalog item",
		Long: "Order a catalog item: the order runs through the policies, is placed on a provider\n" +
			"and provisioned in the background; --wait follows it until it settles (running,\n" +
			"or failed, rejected) and exits 1 unless it runs.\n\n" +
			"A --set value is read as JSON when it parses (2, true, [\"300\"]), else as a string.",
		Example: "  steward order sleeper --id hello --set 'process.args=[\"600\"]' --wait\n" +
			"  steward order small-fedora-vm --set vcpu.count=2 --set size=small -l env=dev",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: e.completeIDs(&cf, catalogItems),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(out); err != nil {
				return err
			}
			body := client.CatalogItemInstanceCreate{CatalogItemId: args[0], DisplayName: opt(name), ParentId: opt(parent)}
			if len(sets) > 0 {
				values := make([]client.UserValue, 0, len(sets))
				for _, s := range sets {
					v, err := parseSet(s)
					if err != nil {
						return err
					}
					values = append(values, v)
				}
				body.UserValues = &values
			}
			if len(labels) > 0 {
				m := map[string]string{}
				for _, l := range labels {
					k, v, ok := strings.Cut(l, "=")
					if !ok || k == "" {
						return usagef("--label %q: want KEY=VALUE", l)
					}
					m[k] = v
				}
				body.Labels = &m
			}
			c, err := cf.connect(cmd)
			if err != nil {
				return err
			}
			err = e.startAndFollow(cmd.Context(), c, func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
				return api.CreateCatalogItemInstance(ctx, &client.CreateCatalogItemInstanceParams{Id: opt(id)}, body)
			}, orders, out, wait, waitFor{what: "settled"}, wf)
			return c.nameUnknownItem(cmd.Context(), err, args[0])
		},
	}
	cf.register(cmd)
	wf.register(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&sets, "set", nil, "a value for an editable field, PATH=VALUE (repeatable)")
	f.StringVar(&id, "id", "", "the order's id (default: the server generates a UUID)")
	f.StringVar(&name, "name", "", "the order's display name")
	f.StringVar(&parent, "parent", "", "the parent order's id")
	f.StringArrayVarP(&labels, "label", "l", nil, "a label, KEY=VALUE (repeatable)")
	f.BoolVar(&wait, "wait", false, "follow the order until it settles")
	f.StringVarP(&out, "output", "o", "", "json, yaml, wide or name (default: a table)")
	return cmd
}

// itemsListed is how many catalog items an unknown item's message lists;
// from a larger catalog it names the closest ones only.
const itemsListed = 12

// nameUnknownItem turns the server's "catalog item not found" for an order
// of item into one that names it and lists the items there are (the
// closest ones, when there are many); any other error is returned as it is.
func (c *conn) nameUnknownItem(ctx context.Context, err error, item string) error {
	var p *client.ProblemError
	if !errors.As(err, &p) || p.Reason != "CATALOG_ITEM_NOT_FOUND" {
		return err
	}
	objs, lerr := c.listObjects(ctx, catalogItems, listQuery{limit: 1000})
	if lerr != nil {
		return err
	}
	ids := make([]string, len(objs))
	for i, o := range objs {
		ids[i] = o.str("id")
	}
	named := *p
	named.Detail = unknownItemDetail(item, ids)
	return &named
}

// unknownItemDetail says that no catalog item is item, and which ones
// there are: all of ids, or from a larger catalog the closest to item.
func unknownItemDetail(item string, ids []string) string {
	detail := fmt.Sprintf("no catalog item %q", item)
	near := closest(item, ids, 5)
	switch {
	case len(ids) == 0:
		return detail + "; the catalog has no items"
	case len(ids) <= itemsListed:
		return detail + didYouMean(near[:min(1, len(near))]) + "; the catalog items are " + strings.Join(ids, ", ")
	case len(near) > 0:
		return detail + fmt.Sprintf("; the closest of the %d catalog items: %s (steward get items lists them all)",
			len(ids), strings.Join(near, ", "))
	}
	return detail + fmt.Sprintf("; none of the %d catalog items is close: steward get items lists them", len(ids))
}

// startAndFollow makes a call that answers a resource of kind k (a new
// order, an Operation) and prints it, or with wait follows it until w
// holds and prints it then.
func (e *env) startAndFollow(ctx context.Context, c *conn, do func(context.Context, client.ClientInterface) (*http.Response, error),
	k *kind, out string, wait bool, w waitFor, wf waitFlags) error {
	_, err := e.startAndFollowed(ctx, c, do, k, out, wait, w, wf)
	return err
}

// startAndFollowed is startAndFollow that returns the last reading.
func (e *env) startAndFollowed(ctx context.Context, c *conn, do func(context.Context, client.ClientInterface) (*http.Response, error),
	k *kind, out string, wait bool, w waitFor, wf waitFlags) (object, error) {
	raw, _, err := c.call(ctx, do)
	if err != nil {
		return object{}, err
	}
	o, err := decodeObject(raw)
	if err != nil {
		return object{}, err
	}
	p := &printer{w: e.stdout, k: k, format: out, now: e.now()}
	if !wait {
		return o, p.one(o)
	}
	return e.await(ctx, c, k, o.id(k), w, wf, p)
}

// rehydrateCmd is `steward rehydrate ORDER`: recreate an order under
// today's policies (an Operation). The old instance is removed after the
// Operation is done: --wait says so, --wait=all waits for it.
func (e *env) rehydrateCmd() *cobra.Command {
	var (
		cf   connFlags
		wf   waitFlags
		out  string
		mode string
	)
	cmd := &cobra.Command{
		Use:   "rehydrate ORDER",
		Short: "Recreate an order from its original intent under today's policies",
		Long: "Start a rehydration (an Operation) and print it; --wait follows the Operation to its end,\n" +
			"then says what is still being removed: the old instance, deleted by its cleanup task after\n" +
			"the order moved onto the new one. --wait=all waits for that too (all within --timeout).",
		Example: "  steward rehydrate hello --wait=all",
		Args:    usageArgs(cobra.ExactArgs(1)),
	}
	cmd.ValidArgsFunction = e.completeIDs(&cf, orders)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		id, err := idOf(args[0], orders)
		if err != nil {
			return err
		}
		if err := checkWaitMode(mode); err != nil {
			return err
		}
		c, err := cf.connectFor(cmd, out, id)
		if err != nil {
			return err
		}
		ctx, cancel := withTimeout(cmd.Context(), wf.timeout) // one deadline for the Operation and the cleanup
		defer cancel()
		op, err := e.startAndFollowed(ctx, c, func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
			return api.RehydrateCatalogItemInstance(ctx, id, nil)
		}, operations, out, mode != waitNone, waitFor{what: "done"}, wf)
		if err != nil || mode == waitNone {
			return err
		}
		if order := op.str("metadata.catalog_item_instance_id"); order != "" {
			id = order // the id, where the argument was an identity
		}
		return e.followCleanup(ctx, c, id, op.str("metadata.old_instance_id"), mode, wf.interval)
	}
	cf.register(cmd)
	wf.register(cmd)
	registerWaitMode(cmd, &mode, "follow the Operation to its end and say what is still being removed; "+
		"--wait=all: until that is removed too")
	cmd.Flags().StringVarP(&out, "output", "o", "", "json, yaml, wide or name (default: a table)")
	return cmd
}

// orderOperationCmd completes cmd into a command that starts an Operation
// on the order its one argument names (start), prints it, and with --wait
// follows it to its end.
func (e *env) orderOperationCmd(cmd *cobra.Command,
	start func(ctx context.Context, api client.ClientInterface, id string) (*http.Response, error)) *cobra.Command {
	var (
		cf   connFlags
		wf   waitFlags
		out  string
		wait bool
	)
	cmd.Args = usageArgs(cobra.ExactArgs(1))
	cmd.ValidArgsFunction = e.completeIDs(&cf, orders)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		id, err := idOf(args[0], orders)
		if err != nil {
			return err
		}
		c, err := cf.connectFor(cmd, out, id)
		if err != nil {
			return err
		}
		return e.startAndFollow(cmd.Context(), c, func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
			return start(ctx, api, id)
		}, operations, out, wait, waitFor{what: "done"}, wf)
	}
	cf.register(cmd)
	wf.register(cmd)
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the Operation to its end")
	cmd.Flags().StringVarP(&out, "output", "o", "", "json, yaml, wide or name (default: a table)")
	return cmd
}

// deleteCmd is `steward delete KIND ID…` (or KIND/ID…).
func (e *env) deleteCmd() *cobra.Command {
	var (
		cf        connFlags
		wf        waitFlags
		ifMatch   string
		reason    string
		wait      string
		force     bool
		deletable = func(k *kind) bool { return k.del != nil }
	)
	cmd := &cobra.Command{
		Use:   "delete KIND ID... | KIND/ID...",
		Short: "Delete resources",
		Long: "Delete resources by id, or named KIND/ID as -o name prints them. An order's deletion\n" +
			"runs in the background: it is removed once its provider and every adapter confirmed\n" +
			"the cleanup; --wait follows it there, then says what of it is still being removed (an old\n" +
			"instance a rehydration left to its cleanup task); --wait=all waits for that too.\n\n" +
			"--force --reason R removes orders at once (admins): their deletion is started, then\n" +
			"cut short without waiting for adapters or children (:forceDelete); what adapters made\n" +
			"may be left behind. The reason is kept in the order's event log and the audit log.",
		Example: "  steward delete order hello --wait\n  steward delete policy vm-cap --if-match '\"3\"'\n" +
			"  steward delete order stuck --force --reason 'provider decommissioned'\n" +
			"  steward delete $(steward get orders -l env=dev -o name)",
		Args:              usageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: e.completeKindAndIDs(&cf, deletable),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, refs, err := parseRefs(args)
			if err != nil {
				return err
			}
			if len(refs) == 0 {
				return usagef("name what to delete: KIND ID..., or KIND/ID...")
			}
			for _, r := range refs {
				switch {
				case !deletable(r.k):
					return usagef("%s cannot be deleted through the API; the kinds that can: %s", r.k.name,
						strings.Join(kindsWith(deletable), ", "))
				case force && r.k != orders:
					return usagef("--force deletes orders only, not %s", r.k.name)
				}
			}
			if force != (reason != "") {
				return usagef("--force and --reason go together: --force --reason 'why'")
			}
			if force && ifMatch != "" {
				return usagef("--force takes no --if-match")
			}
			if err := checkWaitMode(wait); err != nil {
				return err
			}
			c, err := cf.connect(cmd)
			if err != nil {
				return err
			}
			ctx, cancel := withTimeout(cmd.Context(), wf.timeout) // one deadline for the deletions and their cleanup
			defer cancel()
			for _, r := range refs {
				if force {
					if err := e.forceDelete(cmd.Context(), c, r.id, reason); err != nil {
						return err
					}
					continue
				}
				_, rsp, err := c.call(cmd.Context(), func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
					return r.k.del(ctx, api, r.id, ifMatch)
				})
				if err != nil {
					return err
				}
				verb := "deleted"
				if rsp.StatusCode == http.StatusAccepted {
					verb = "deletion started"
				}
				if wait != waitNone && rsp.StatusCode == http.StatusAccepted {
					if _, err := e.await(ctx, c, r.k, r.id, waitFor{what: "delete"}, wf, nil); err != nil {
						return err
					}
					verb = "deleted"
					if r.k == orders {
						if err := e.followCleanup(ctx, c, r.id, "", wait, wf.interval); err != nil {
							return err
						}
					}
				}
				fmt.Fprintf(e.stdout, "%s/%s %s\n", r.k.name, r.id, verb)
			}
			return nil
		},
	}
	cf.register(cmd)
	wf.register(cmd)
	f := cmd.Flags()
	registerWaitMode(cmd, &wait, "wait until a deletion that runs in the background is done and say what is still "+
		"being removed; --wait=all: until that is removed too")
	f.StringVar(&ifMatch, "if-match", "", "delete only if the resource's etag is still this one")
	f.BoolVar(&force, "force", false, "remove orders at once, without their provider's cleanup (admins; needs --reason)")
	f.StringVar(&reason, "reason", "", "with --force: why, kept in the event and audit logs")
	return cmd
}

// forceDelete removes an order at once: its deletion is started (a DELETE
// of an order being deleted changes nothing), then cut short (:forceDelete).
func (e *env) forceDelete(ctx context.Context, c *conn, id, reason string) error {
	_, _, err := c.call(ctx, func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
		return orders.del(ctx, api, id, "")
	})
	if err != nil {
		return err
	}
	_, _, err = c.call(ctx, func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
		return api.ForceDeleteCatalogItemInstance(ctx, id, client.ForceDeleteCatalogItemInstanceJSONRequestBody{Reason: reason})
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%s/%s force-deleted\n", orders.name, id)
	return err
}

// setStateCmd is `steward set-state ORDER STATE`: an api transfer of the
// order's lifecycle.
func (e *env) setStateCmd() *cobra.Command {
	var (
		cf      connFlags
		version int64
		out     string
	)
	cmd := &cobra.Command{
		Use:   "set-state ORDER STATE",
		Short: "Move an order along one of its lifecycle's api transfers",
		Long: "Ask for an api transfer of the order's lifecycle (abort a rejected update, roll\n" +
			"back a failed one, …). The order's current version is read first unless\n" +
			"--current-version gives it; a concurrent change then answers 409.",
		Example:           "  steward set-state hello up",
		Args:              usageArgs(cobra.ExactArgs(2)),
		ValidArgsFunction: e.completeIDs(&cf, orders),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idOf(args[0], orders)
			if err != nil {
				return err
			}
			c, err := cf.connectFor(cmd, out, id)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("current-version") {
				o, err := c.getObject(cmd.Context(), orders, id)
				if err != nil {
					return err
				}
				if version, err = strconv.ParseInt(o.str("version"), 10, 64); err != nil {
					return fmt.Errorf("order %s has no version: %w", id, err)
				}
			}
			body := client.SetCatalogItemInstanceStateJSONRequestBody{TargetState: args[1], CurrentVersion: version}
			raw, _, err := c.call(cmd.Context(), func(ctx context.Context, api client.ClientInterface) (*http.Response, error) {
				return api.SetCatalogItemInstanceState(ctx, id, nil, body)
			})
			if err != nil {
				return err
			}
			o, err := decodeObject(bytes.TrimSpace(raw))
			if err != nil {
				return err
			}
			return (&printer{w: e.stdout, k: orders, format: out, now: e.now()}).one(o)
		},
	}
	cf.register(cmd)
	cmd.Flags().Int64Var(&version, "current-version", 0, "the order's version the transfer applies to (default: read it)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "json, yaml, wide or name (default: a table)")
	return cmd
}
