package ctl

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// getCmd is `steward get KIND [ID…]`.
func (e *env) getCmd() *cobra.Command {
	var (
		cf          connFlags
		output      string
		filters     []string
		labels      []string
		showDeleted bool
		limit       int
		watch       bool
		everyProj   bool
		app         string
		interval    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "get KIND [ID...] | KIND/ID...",
		Short: "List resources of a kind, or show some by id",
		Long: "List the resources of a kind as a table, or show the ones named.\n\n" +
			"KIND is an API collection name or a short alias: " + strings.Join(kindNames(), ", ") +
			"\n(orders, items, types, policy, … work too). Resources may also be named KIND/ID, as\n" +
			"-o name prints them. A repair operation's id is APP_INSTANCE/OPERATION_ID; an app\n" +
			"instance's operations are listed with --app-instance.\n\n" +
			"  steward get orders                       # every order\n" +
			"  steward get orders --filter state=up -l env=prod\n" +
			"  steward get order hello -o yaml          # one, as YAML\n" +
			"  steward get orders --watch               # then a line per change\n" +
			"  steward get orders -A                    # every project's (admins), with a PROJECT column\n" +
			"  steward get orders --project team-a      # another project's (admins)\n" +
			"  steward get catalog-item-instances/c1    # KIND/ID, as -o name prints it\n" +
			"  steward get app-instance sc1             # an order's runtime and repairs\n" +
			"  steward get repair-operations --app-instance sc1",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("get needs a KIND: %s", strings.Join(kindNames(), ", "))
			}
			return nil
		},
		ValidArgsFunction: e.completeKindAndIDs(&cf, func(k *kind) bool { return k.list != nil }),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, refs, err := parseRefs(args)
			if err != nil {
				return err
			}
			if err := checkOutput(output); err != nil {
				return err
			}
			if everyProj {
				switch {
				case k == nil || !k.acrossProjects:
					return usagef("-A lists every project of %s only; name the project of others with --project",
						strings.Join(kindsWith(func(k *kind) bool { return k.acrossProjects }), ", "))
				case cf.project != "":
					return usagef("-A lists every project; --project names one: give one of them")
				case len(refs) > 0:
					return usagef("-A lists every project; to read one by id name its project with --project")
				}
			}
			if app != "" {
				if k != repairOperations || len(refs) > 0 {
					return usagef("--app-instance lists the repair operations of one app instance: steward get repair-operations --app-instance ID")
				}
				if app, err = appInstanceID(app); err != nil {
					return err
				}
				k = &kind{name: k.name, columns: k.columns, wide: k.wide, nameOf: k.nameOf, idParts: k.idParts,
					list: listRepairOperations(app)}
			}
			c, err := cf.connect(cmd)
			if err != nil {
				return err
			}
			if everyProj {
				// An older server reads Steward-Project: * as a project
				// named "*", and lists nothing.
				if err := c.requireRevision(cmd.Context(), 1, "-A (every project's)"); err != nil {
					return err
				}
				c.project = allProjects
			}
			p := printer{w: e.stdout, k: k, format: output, now: e.now(), allProjects: everyProj}
			if len(refs) > 0 {
				if watch {
					return usagef("--watch follows a list; to follow one resource use: steward wait")
				}
				return e.getByRefs(cmd.Context(), c, p, refs)
			}
			q, err := parseListQuery(filters, labels, showDeleted, limit)
			if err != nil {
				return err
			}
			if k.list == nil {
				if k == repairOperations {
					return usagef("repair operations are listed per app instance: steward get repair-operations --app-instance ID")
				}
				return usagef("%s cannot be listed; name one: steward get %s ID", k.name, k.name)
			}
			objs, err := c.listObjects(cmd.Context(), k, q)
			if err != nil {
				return err
			}
			var note string
			if k == catalogItems && p.table() {
				note = c.served(cmd.Context(), objs)
			}
			if err := p.list(objs); err != nil || !watch {
				printNote(e.stderr, note)
				return err
			}
			return e.watchList(cmd.Context(), c, p, q, objs, interval)
		},
	}
	cf.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "json, yaml, wide or name (default: a table)")
	f.StringArrayVar(&filters, "filter", nil, "a filter the collection takes, NAME=VALUE: --filter state=up (repeatable)")
	f.StringArrayVarP(&labels, "label", "l", nil, "only resources with this label, KEY=VALUE (repeatable)")
	f.BoolVar(&showDeleted, "show-deleted", false, "include removed orders (tombstones)")
	f.IntVar(&limit, "limit", 0, "show at most this many (default: all)")
	f.StringVar(&app, "app-instance", "", "with repair-operations: the app instance whose operations to list")
	f.BoolVarP(&everyProj, "all-projects", "A", false, "list every project's orders, with a PROJECT column (admins)")
	f.BoolVarP(&watch, "watch", "w", false, "after the list, print a line for each resource that changes or appears")
	f.DurationVar(&interval, "interval", 2*time.Second, "how often --watch reads the list again")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml", "wide", "name"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func parseListQuery(filters, labels []string, showDeleted bool, limit int) (listQuery, error) {
	if limit < 0 {
		return listQuery{}, usagef("--limit must not be negative")
	}
	q := listQuery{filters: url.Values{}, limit: limit}
	for _, f := range filters {
		name, value, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return listQuery{}, usagef("--filter %q: want NAME=VALUE, e.g. --filter state=up", f)
		}
		q.filters.Add(name, value)
	}
	for _, l := range labels {
		key, value, ok := strings.Cut(l, "=")
		if !ok || key == "" {
			return listQuery{}, usagef("--label %q: want KEY=VALUE, e.g. -l env=prod", l)
		}
		q.filters.Add("label", key+":"+value)
	}
	if showDeleted {
		q.filters.Set("show_deleted", "true")
	}
	return q, nil
}

// getByRefs prints the named resources, a table (or list) per run of one
// kind. A missing one is an error after the others are printed.
func (e *env) getByRefs(ctx context.Context, c *conn, p printer, refs []ref) error {
	var firstErr error
	for i, g := range groupRefs(refs) {
		if i > 0 && (p.format == outTable || p.format == outWide) {
			fmt.Fprintln(p.w)
		}
		p.k = g[0].k
		ids := make([]string, len(g))
		for j, r := range g {
			ids[j] = r.id
		}
		if err := e.getByID(ctx, c, p, ids); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// getByID prints the named resources: one table, or each as JSON/YAML. A
// missing one is an error after the others are printed.
func (e *env) getByID(ctx context.Context, c *conn, p printer, ids []string) error {
	var objs []object
	var firstErr error
	for _, id := range ids {
		o, err := c.getObject(ctx, p.k, id)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		objs = append(objs, o)
	}
	switch {
	case len(objs) == 0:
	case len(ids) == 1:
		if err := p.one(objs[0]); err != nil {
			return err
		}
	default:
		if err := p.list(objs); err != nil {
			return err
		}
	}
	return firstErr
}

// watchList reads the list every interval and prints the row of each
// resource that appeared or changed (by etag or update_time), until the
// command is interrupted. JSON and YAML print the whole resource.
func (e *env) watchList(ctx context.Context, c *conn, p printer, q listQuery, seen []object, interval time.Duration) error {
	if interval <= 0 {
		return usagef("--interval must be positive")
	}
	last := map[string]string{}
	for _, o := range seen {
		last[o.name(p.k)] = version(o)
	}
	// The rows keep the first table's column widths; a row that does not
	// fit widens them, and the header is printed again above it.
	cols := p.columns()
	rows := make([][]string, len(seen))
	for i, o := range seen {
		rows[i] = p.cells(cols, o)
	}
	widths := newLayout(headers(cols), rows)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		objs, err := c.listObjects(ctx, p.k, q)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		present := map[string]bool{}
		for _, o := range objs {
			present[o.name(p.k)] = true
		}
		// A resource that left the list is shown once more as it is now:
		// a removed order's tombstone says how it ended.
		for n := range last {
			if present[n] {
				continue
			}
			delete(last, n)
			if p.k.get == nil {
				continue
			}
			_, id, _ := strings.Cut(n, "/")
			if o, err := c.getObject(ctx, p.k, id); err == nil {
				objs = append(objs, o)
				last[n] = "gone"
			}
		}
		for _, o := range objs {
			n, v := o.name(p.k), version(o)
			if last[n] == v {
				continue
			}
			if last[n] != "gone" {
				last[n] = v
			} else {
				delete(last, n)
			}
			p.now = e.now()
			switch p.format {
			case outJSON, outYAML:
				err = p.one(o)
			case outName:
				_, err = fmt.Fprintln(p.w, n)
			default:
				row := p.cells(cols, o)
				if widths.fit(row) {
					err = widths.print(p.w, headers(cols))
				}
				if err == nil {
					err = widths.print(p.w, row)
				}
			}
			if err != nil {
				return err
			}
		}
	}
}

// version tells two readings of a resource apart.
func version(o object) string {
	return o.str("etag") + "|" + o.str("update_time") + "|" + o.str("state") + "|" + o.str("status") + "|" + o.str("done")
}
