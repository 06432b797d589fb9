package ctl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/pkg/client"
)

// The values of --wait on a command whose work leaves instances to remove
// (rehydrate, delete): the work done, then what is still being removed
// said (--wait), or waited for too (--wait=all). Issue 46, item 8: after
// rehydrate --wait said done, the old instance ran on until the next
// cleanup pass, and nothing said so.
const (
	waitNone = ""
	waitDone = "done"
	waitAll  = "all"
)

// registerWaitMode adds --wait (a bare --wait is --wait=done) to cmd.
func registerWaitMode(cmd *cobra.Command, mode *string, usage string) {
	cmd.Flags().StringVar(mode, "wait", waitNone, usage)
	cmd.Flags().Lookup("wait").NoOptDefVal = waitDone
}

// checkWaitMode refuses a --wait value other than done and all.
func checkWaitMode(mode string) error {
	switch mode {
	case waitNone, waitDone, waitAll:
		return nil
	}
	return usagef("--wait=%s: want --wait (until done) or --wait=all (and until what it leaves is removed)", mode)
}

// cleanupEntry is one member of an order's cleanup: an instance of it
// still being removed from its provider, by a cleanup task.
type cleanupEntry struct {
	task, instance, provider, status string
}

// cleanupOfOrder reads an order's cleanup (none from a server older than
// API revision 2, which does not show it).
func cleanupOfOrder(o object) []cleanupEntry {
	list, _ := o.m["cleanup"].([]any)
	out := make([]cleanupEntry, 0, len(list))
	for _, v := range list {
		m, _ := v.(map[string]any)
		out = append(out, cleanupEntry{task: text(m["task_id"]), instance: text(m["instance_id"]),
			provider: text(m["provider_name"]), status: text(m["status"])})
	}
	return out
}

// describe says what c is, "the old instance" when it is old.
func (c cleanupEntry) describe(old string) string {
	what := "instance"
	if c.instance == old {
		what = "the old instance"
	}
	return fmt.Sprintf("%s %s on %s", what, c.instance, c.provider)
}

// followCleanup says what of order id is still being removed once the
// work mode waited for is done (old names the instance the work replaced,
// if any): a line each on stderr; with waitAll it then follows the order
// until nothing is, within ctx. A task that FAILED fails waitAll: it waits
// for an admin.
func (e *env) followCleanup(ctx context.Context, c *conn, id, old, mode string, interval time.Duration) error {
	if mode == waitNone {
		return nil
	}
	if mode == waitAll {
		if err := c.requireRevision(ctx, 2, "--wait=all"); err != nil {
			return err
		}
	}
	pending, err := e.orderCleanup(ctx, c, id)
	if err != nil {
		return err
	}
	for _, p := range pending {
		if p.status == "FAILED" {
			fmt.Fprintf(e.stderr, "the removal of %s FAILED (cleanup task %s): it waits for an admin's retry\n",
				p.describe(old), p.task)
			continue
		}
		fmt.Fprintf(e.stderr, "%s is being removed (cleanup task %s)\n", p.describe(old), p.task)
	}
	if mode != waitAll {
		if len(pending) > 0 {
			fmt.Fprintln(e.stderr, "--wait=all waits until it is gone")
		}
		return nil
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for len(pending) > 0 {
		for _, p := range pending {
			if p.status == "FAILED" {
				return fmt.Errorf("the removal of %s FAILED (cleanup task %s): it waits for an admin's retry "+
					"(POST /api/v1/cleanup-tasks/%s:retry)", p.describe(old), p.task, p.task)
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return ctx.Err()
			}
			return fmt.Errorf("timed out waiting for the removal of %s (cleanup task %s)", pending[0].describe(old), pending[0].task)
		case <-t.C:
		}
		now, err := e.orderCleanup(ctx, c, id)
		if err != nil {
			return err
		}
		for _, p := range pending {
			if !slices.ContainsFunc(now, func(n cleanupEntry) bool { return n.task == p.task }) {
				fmt.Fprintf(e.stderr, "%s is removed\n", p.describe(old))
			}
		}
		pending = now
	}
	return nil
}

// orderCleanup reads what of order id is being removed; none once the
// order is purged.
func (e *env) orderCleanup(ctx context.Context, c *conn, id string) ([]cleanupEntry, error) {
	o, err := c.getObject(ctx, orders, id)
	var p *client.ProblemError
	if errors.As(err, &p) && p.Status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return cleanupOfOrder(o), nil
}
