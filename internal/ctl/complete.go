package ctl

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// completionTimeout bounds the list a completion reads: a shell waits for it.
const completionTimeout = 3 * time.Second

// completeKindAndIDs completes a kind name (those has accepts), then the
// ids of that kind's resources, read from the server.
func (e *env) completeKindAndIDs(cf *connFlags, has func(*kind) bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			var names []cobra.Completion
			for _, k := range kinds {
				if has(k) && strings.HasPrefix(k.name, toComplete) {
					names = append(names, k.name)
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		}
		k, err := findKind(args[0])
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return e.ids(cmd, cf, k, args[1:], toComplete)
	}
}

// completeIDs completes the first argument with the ids of k's resources.
func (e *env) completeIDs(cf *connFlags, k *kind) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return e.ids(cmd, cf, k, nil, toComplete)
	}
}

// ids lists k's resources and offers the ids that start with prefix and
// are not already on the command line; a server out of reach offers none.
func (e *env) ids(cmd *cobra.Command, cf *connFlags, k *kind, given []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if k.list == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := cf.connect(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	objs, err := c.listObjects(ctx, k, listQuery{limit: 1000})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, o := range objs {
		id := o.str("id")
		if !strings.HasPrefix(id, prefix) || slices.Contains(given, id) {
			continue
		}
		out = append(out, cobra.CompletionWithDesc(id, describeShort(o)))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// describeShort is the few words a completion shows beside an id.
func describeShort(o object) string {
	for _, m := range []string{"display_name", "state", "status", "policy_type", "service_type"} {
		if s := o.str(m); s != "" {
			return s
		}
	}
	return ""
}
