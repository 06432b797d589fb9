package ctl

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/pkg/client"
)

// A condition to wait for (--for).
type waitFor struct {
	// what is settled, done, delete, condition or field.
	what string
	// path and value: the member path and the value it must have (field),
	// or the condition type and status (condition).
	path, value string
}

func (w waitFor) String() string {
	switch w.what {
	case "field":
		return w.path + "=" + w.value
	case "condition":
		return "condition " + w.path + "=" + w.value
	}
	return w.what
}

// parseFor reads --for: settled, done, delete, condition=TYPE[=STATUS], or
// PATH=VALUE for any member (state=up, status=healthy, done=true).
func parseFor(s string) (waitFor, error) {
	switch s {
	case "settled", "done", "delete":
		return waitFor{what: s}, nil
	}
	if rest, ok := strings.CutPrefix(s, "condition="); ok {
		typ, status, ok := strings.Cut(rest, "=")
		if !ok {
			status = "True"
		}
		if typ == "" {
			return waitFor{}, usagef("--for %q: want condition=TYPE or condition=TYPE=STATUS", s)
		}
		return waitFor{what: "condition", path: typ, value: status}, nil
	}
	path, value, ok := strings.Cut(s, "=")
	if !ok || path == "" {
		return waitFor{}, usagef("--for %q: want settled, done, delete, condition=TYPE[=STATUS] or FIELD=VALUE (state=up)", s)
	}
	return waitFor{what: "field", path: path, value: value}, nil
}

// Ready reasons of an order that no transfer leaves without someone
// acting: the order has settled.
var settledReasons = []string{"Running", "Completed", "Failed", "Rejected", "Terminated"}

// failedReasons are settled reasons that are not success.
var failedReasons = []string{"Failed", "Rejected", "Terminated"}

// waiter follows one resource until a condition holds.
type waiter struct {
	c        *conn
	k        *kind
	id       string
	for_     waitFor
	interval time.Duration
	// progress is where the live progress line goes (stderr); tty says
	// whether to redraw one line or print a line per change.
	progress io.Writer
	tty      bool
	now      func() time.Time
}

// errGone is what a wait for deletion observes when the resource is gone.
var errGone = errors.New("gone")

// run polls until the condition holds, the resource settles where the
// condition can no longer hold, or ctx ends. It returns the last reading
// (none after a deletion).
func (w *waiter) run(ctx context.Context) (object, error) {
	start := w.now()
	var last object
	var lastLine string
	t := time.NewTicker(w.interval)
	defer t.Stop()
	defer func() {
		if w.tty && lastLine != "" {
			fmt.Fprintln(w.progress)
		}
	}()
	for {
		o, err := w.c.getObject(ctx, w.k, w.id)
		var p *client.ProblemError
		switch {
		case err == nil:
			last = o
		case w.for_.what == "delete" && errors.As(err, &p) && p.Status == http.StatusNotFound:
			w.show(&lastLine, start, "gone")
			return object{}, nil
		case ctx.Err() != nil:
			return last, w.timeout(ctx, start, last)
		default:
			return last, err
		}
		w.show(&lastLine, start, w.summary(o))
		done, err := w.check(o)
		if done || err != nil {
			return o, err
		}
		select {
		case <-ctx.Done():
			return last, w.timeout(ctx, start, last)
		case <-t.C:
		}
	}
}

func (w *waiter) timeout(ctx context.Context, start time.Time, last object) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	now := ""
	if last.m != nil {
		now = ": " + w.summary(last)
	}
	return fmt.Errorf("timed out after %s waiting for %s/%s to be %s%s",
		w.now().Sub(start).Round(time.Second), w.k.name, w.id, w.for_, now)
}

// show writes the progress: the line redrawn in place on a terminal, else a
// line each time it changes.
func (w *waiter) show(last *string, start time.Time, summary string) {
	if w.progress == nil {
		return
	}
	if w.tty {
		line := fmt.Sprintf("%s/%s: %s (%s)", w.k.name, w.id, summary, w.now().Sub(start).Round(time.Second))
		fmt.Fprintf(w.progress, "\r\033[K%s", line)
		*last = line
		return
	}
	if summary == *last {
		return
	}
	*last = summary
	fmt.Fprintf(w.progress, "%s/%s: %s (after %s)\n", w.k.name, w.id, summary, w.now().Sub(start).Round(time.Second))
}

// summary is the reading's progress in a few words: an order's state and
// Ready condition, an Operation's step, or the watched member.
func (w *waiter) summary(o object) string {
	if isRepairOperation(o) {
		return repairSummary(o)
	}
	var parts []string
	if s := o.str("state"); s != "" {
		parts = append(parts, "state "+s)
	}
	if c := condition(o, "Ready"); c != nil {
		parts = append(parts, "Ready "+ready(o, time.Time{}))
	}
	if _, ok := o.m["done"]; ok {
		parts = append(parts, "done "+o.str("done"))
		if s := o.str("metadata.step"); s != "" {
			parts = append(parts, "step "+s)
		}
	}
	if w.for_.what == "field" && w.for_.path != "state" {
		parts = append(parts, w.for_.path+" "+o.str(w.for_.path))
	}
	if s := o.str("status"); s != "" && len(parts) == 0 {
		parts = append(parts, "status "+s)
	}
	return strings.Join(parts, ", ")
}

// check says whether the condition holds, or fails when it cannot come to
// hold any more: an order that settled elsewhere, a failed Operation.
func (w *waiter) check(o object) (bool, error) {
	reason := text(condition(o, "Ready")["reason"])
	stuck := func(in []string) error {
		if !slices.Contains(in, reason) {
			return nil
		}
		msg := ""
		if m := text(condition(o, "Ready")["message"]); m != "" {
			msg = ": " + m
		}
		return fmt.Errorf("%s/%s settled as %s (state %s) and will not be %s without another request%s",
			w.k.name, w.id, reason, o.str("state"), w.for_, msg)
	}
	if isRepairOperation(o) && (w.for_.what == "settled" || w.for_.what == "done") {
		return repairDone(o)
	}
	switch w.for_.what {
	case "settled":
		if _, isOp := o.m["done"]; isOp {
			return w.opDone(o)
		}
		if !slices.Contains(settledReasons, reason) {
			return false, nil
		}
		return true, stuck(failedReasons)
	case "done":
		return w.opDone(o)
	case "delete":
		// A removed order stays readable as a tombstone until purged.
		return o.str("expire_time") != "", nil
	case "condition":
		c := condition(o, w.for_.path)
		if c != nil && text(c["status"]) == w.for_.value {
			return true, nil
		}
		return false, stuck([]string{"Rejected", "Terminated"})
	default:
		if o.str(w.for_.path) == w.for_.value {
			return true, nil
		}
		return false, stuck(failedReasons)
	}
}

// opDone is an Operation's end: its error, if it has one, as the problem.
func (w *waiter) opDone(o object) (bool, error) {
	if o.str("done") != "true" {
		return false, nil
	}
	perr, ok := o.m["error"].(map[string]any)
	if !ok {
		return true, nil
	}
	b, err := json.Marshal(perr)
	if err != nil {
		return true, err
	}
	p := &client.ProblemError{}
	if err := json.Unmarshal(b, p); err != nil {
		return true, err
	}
	_ = json.Unmarshal(b, &p.Members)
	if p.Title == "" {
		p.Title = "Operation failed"
	}
	return true, p
}

// waitFlags are the flags of a command that can wait.
type waitFlags struct {
	timeout, interval time.Duration
}

func (f *waitFlags) register(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&f.timeout, "timeout", 5*time.Minute, "give up waiting after this long (0: never)")
	cmd.Flags().DurationVar(&f.interval, "interval", 500*time.Millisecond, "how often to read the resource while waiting")
}

// await waits on a resource and prints it at the end with p.
func (e *env) await(ctx context.Context, c *conn, k *kind, id string, w waitFor, f waitFlags, p *printer) (object, error) {
	if f.interval <= 0 {
		return object{}, usagef("--interval must be positive")
	}
	ctx, cancel := withTimeout(ctx, f.timeout)
	defer cancel()
	wt := &waiter{c: c, k: k, id: id, for_: w, interval: f.interval, progress: e.stderr, tty: isTerminal(e.stderr), now: e.now}
	o, err := wt.run(ctx)
	if p != nil && o.m != nil {
		p.now = e.now()
		if perr := p.one(o); perr != nil && err == nil {
			err = perr
		}
	}
	return o, err
}

// isTerminal says whether w is a terminal (a character device), where a
// progress line can be redrawn.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// waitCmd is `steward wait KIND ID --for …`.
func (e *env) waitCmd() *cobra.Command {
	var (
		cf     connFlags
		wf     waitFlags
		forArg string
		output string
	)
	cmd := &cobra.Command{
		Use:   "wait KIND ID | KIND/ID [--for CONDITION]",
		Short: "Wait until a resource reaches a state, a condition, its end or its deletion",
		Long: "Follow a resource until --for holds, with a live progress line on a terminal\n" +
			"and a line per change otherwise. Exit 0 when it holds; 1 when it times out or can no\n" +
			"longer hold (an order that failed, was rejected or terminated; an Operation that\n" +
			"ended in an error, printed as the problem).\n\n" +
			"--for is one of:\n" +
			"  settled                 an order no longer in progress: Ready, or failed, rejected,\n" +
			"                          terminated (the default for orders; for Operations, done)\n" +
			"  state=up                any member at a value (status=healthy, done=true)\n" +
			"  condition=Ready[=True]  a condition with that status\n" +
			"  done                    an Operation's or a repair operation's end\n" +
			"  delete                  the resource is gone (an order: a tombstone)",
		Example: "  steward wait order hello --for state=up\n" +
			"  steward wait operation 0192c5e1-… --timeout 10m",
		Args:              usageArgs(cobra.RangeArgs(1, 2)),
		ValidArgsFunction: e.completeKindAndIDs(&cf, func(k *kind) bool { return k.get != nil }),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, refs, err := parseRefs(args)
			if err != nil {
				return err
			}
			if len(refs) != 1 {
				return usagef("wait follows one resource: KIND ID, or KIND/ID")
			}
			k := refs[0].k
			if k.get == nil {
				return usagef("%s cannot be read one at a time, so not waited for", k.name)
			}
			if err := checkOutput(output); err != nil {
				return err
			}
			w, err := parseFor(cmp.Or(forArg, "settled"))
			if err != nil {
				return err
			}
			c, err := cf.connect(cmd)
			if err != nil {
				return err
			}
			p := &printer{w: e.stdout, k: k, format: output}
			if !cmd.Flags().Changed("output") {
				p = nil // a wait prints its progress only
			}
			_, err = e.await(cmd.Context(), c, k, refs[0].id, w, wf, p)
			return err
		},
	}
	cf.register(cmd)
	wf.register(cmd)
	cmd.Flags().StringVar(&forArg, "for", "", "settled (default), done, delete, condition=TYPE[=STATUS] or FIELD=VALUE")
	cmd.Flags().StringVarP(&output, "output", "o", "", "print the resource at the end: json, yaml, wide or name")
	return cmd
}
