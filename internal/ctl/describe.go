package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/stewardhq/steward/pkg/client"
)

// describeCmd is `steward describe KIND ID`: every member of a resource
// for a person, and for an order its lifecycle log and adapter statuses.
func (e *env) describeCmd() *cobra.Command {
	var cf connFlags
	cmd := &cobra.Command{
		Use:   "describe KIND ID | KIND/ID",
		Short: "Show one resource in detail (an order with its lifecycle log)",
		Example: "  steward describe order hello\n" +
			"  steward describe policy vm-cap\n" +
			"  steward describe catalog-item-instances/hello\n" +
			"  steward describe repair-operations/sc1/0194b7d2-…",
		Args:              usageArgs(cobra.RangeArgs(1, 2)),
		ValidArgsFunction: e.completeKindAndIDs(&cf, func(k *kind) bool { return k.get != nil }),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, refs, err := parseRefs(args)
			if err != nil {
				return err
			}
			if len(refs) != 1 {
				return usagef("describe takes one resource: KIND ID, or KIND/ID")
			}
			k, id := refs[0].k, refs[0].id
			c, err := cf.connect(cmd)
			if err != nil {
				return err
			}
			o, err := c.getObject(cmd.Context(), k, id)
			if err != nil {
				return err
			}
			if k == orders {
				sayStatusOnce(o)
			}
			var b bytes.Buffer
			if err := describe(&b, o); err != nil {
				return err
			}
			if k == orders {
				if err := e.describeOrderLogs(cmd.Context(), &b, c, id, o.str("status_message")); err != nil {
					return err
				}
			}
			_, err = e.stdout.Write(b.Bytes())
			return err
		},
	}
	cf.register(cmd)
	return cmd
}

// describe writes the object's members in the server's order, each as
// "Title:  value", nested objects and lists as indented YAML beneath.
func describe(w io.Writer, o object) error {
	keys, err := memberOrder(o.raw)
	if err != nil {
		return err
	}
	width := 0
	for _, k := range keys {
		width = max(width, len(title(k)))
	}
	for _, k := range keys {
		v := o.m[k]
		switch v.(type) {
		case map[string]any, []any:
			if isEmpty(v) {
				fmt.Fprintf(w, "%-*s  <none>\n", width+1, title(k)+":")
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			y, err := yaml.JSONToYAML(b)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s:\n", title(k))
			for line := range strings.SplitSeq(strings.TrimRight(string(y), "\n"), "\n") {
				fmt.Fprintf(w, "  %s\n", line)
			}
		default:
			s := text(v)
			if s == "" {
				s = "<none>"
			}
			if strings.Contains(s, "\n") { // Rego code, say
				fmt.Fprintf(w, "%s:\n", title(k))
				for line := range strings.SplitSeq(strings.TrimRight(s, "\n"), "\n") {
					fmt.Fprintf(w, "  %s\n", line)
				}
				continue
			}
			fmt.Fprintf(w, "%-*s  %s\n", width+1, title(k)+":", s)
		}
	}
	return nil
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

// title turns a member name into a heading: catalog_item_id → Catalog Item Id.
func title(member string) string {
	words := strings.Split(member, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// memberOrder is the order of a JSON object's top-level members.
func memberOrder(raw []byte) ([]string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// seeStatusMessage stands where an order's status message would be
// repeated (see withoutStatusMessage).
const seeStatusMessage = "(see Status Message)"

// withoutStatusMessage is text without the order's status message msg that
// it repeats. The lifecycle quotes the message in the order's last error,
// its Ready condition and its log ("resource … is FAILED: <message>"), and
// a failure detail makes it long, so describe shows it once, as Status
// Message: a text that ends ": <message>" loses that end, and one that is
// the message says seeStatusMessage.
func withoutStatusMessage(text, msg string) string {
	switch {
	case msg == "":
		return text
	case text == msg:
		return seeStatusMessage
	}
	text, _ = strings.CutSuffix(text, ": "+msg)
	return text
}

// sayStatusOnce cuts the repeats of order o's status message out of its
// last error and its conditions' messages.
func sayStatusOnce(o object) {
	msg := o.str("status_message")
	if s, ok := o.m["last_error"].(string); ok {
		o.m["last_error"] = withoutStatusMessage(s, msg)
	}
	conds, _ := o.m["conditions"].([]any)
	for _, c := range conds {
		if c, ok := c.(map[string]any); ok {
			if s, ok := c["message"].(string); ok {
				c["message"] = withoutStatusMessage(s, msg)
			}
		}
	}
}

// eventDetail is what an event says beyond its transfer: why it failed,
// or who reported what, e.g. "process-sp: restart_count 0 -> 1", or what a
// rehydrate or cleanup event records (its message); without the repeats of
// the order's status message msg (withoutStatusMessage).
func eventDetail(ev object, msg string) string {
	if m := ev.str("message"); m != "" {
		return m
	}
	changes, _ := ev.m["changes"].(map[string]any)
	if len(changes) == 0 {
		return withoutStatusMessage(ev.str("error"), msg)
	}
	parts := make([]string, 0, len(changes))
	for _, member := range slices.Sorted(maps.Keys(changes)) {
		c, _ := changes[member].(map[string]any)
		from := text(c["from"])
		if c["from"] == nil {
			from = "<none>"
		}
		to := text(c["to"])
		if member == "status_message" {
			to = withoutStatusMessage(to, msg)
		}
		parts = append(parts, fmt.Sprintf("%s %s -> %s", member, from, to))
	}
	return ev.str("reported_by") + ": " + strings.Join(parts, "; ")
}

// describeOrderLogs adds an order's lifecycle log and adapter statuses;
// msg is its status message, which describe has shown.
func (e *env) describeOrderLogs(ctx context.Context, w io.Writer, c *conn, id, msg string) error {
	events := &kind{name: "events", list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
		return api.ListCatalogItemInstanceEvents(ctx, id, nil, eds...)
	}}
	evs, err := c.listObjects(ctx, events, listQuery{})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "Events:")
	if len(evs) == 0 {
		fmt.Fprintln(w, "  <none>")
	} else {
		tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
		fmt.Fprintln(tw, "  VERSION\tAGE\tTRIGGER\tFROM\tTO\tOPERATION\tDETAIL")
		now := e.now()
		for _, ev := range evs {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", ev.str("version"), age("time")(ev, now), ev.str("trigger"),
				ev.str("from"), ev.str("to"), ev.str("operation"), eventDetail(ev, msg))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	adapters := &kind{name: "adapter-statuses", list: func(ctx context.Context, api client.ClientInterface, eds ...client.RequestEditorFn) (*http.Response, error) {
		return api.ListAdapterStatuses(ctx, id, nil, eds...)
	}}
	sts, err := c.listObjects(ctx, adapters, listQuery{})
	if err != nil || len(sts) == 0 {
		return err
	}
	fmt.Fprintln(w, "Adapter Statuses:")
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "  ADAPTER\tGENERATION\tAPPLIED\tAVAILABLE\tHEALTH\tOBSERVED")
	now := e.now()
	for _, st := range sts {
		cond := func(t string) string { return text(condition(st, t)["status"]) }
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", st.str("adapter"), st.str("observed_generation"),
			cond("Applied"), cond("Available"), cond("Health"), age("observed_time")(st, now))
	}
	return tw.Flush()
}
