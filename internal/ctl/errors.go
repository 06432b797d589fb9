package ctl

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stewardhq/steward/pkg/client"
)

// standardMembers are the problem members PrintError shows in its first
// lines; every other member follows as "name: value".
var standardMembers = []string{"type", "title", "status", "detail", "instance", "reason", "fields"}

// PrintError writes a command's error for a person: a problem answer as
// its title, status and reason, then its detail, each invalid field and
// every extra member on lines of their own; a usage error with where to
// find the usage (cmdPath is the command's, "steward get").
func PrintError(w io.Writer, cmdPath string, err error) {
	var p *client.ProblemError
	var u *UsageError
	switch {
	case errors.As(err, &p):
		fmt.Fprintf(w, "steward: %s (%d %s)\n", p.Title, p.Status, p.Reason)
		// The invalid fields, or a policy's Rego errors, a line each; the
		// detail when it says more than they do (it often lists them again).
		// A field named as the catalog item names it ("image") is followed
		// by where it is in the request and the technical detail.
		var items, more []string
		for _, f := range p.Fields {
			items = append(items, f.Name()+": "+f.Message)
			var second []string
			if f.Name() != f.Field {
				second = append(second, f.Field)
			}
			if f.Detail != "" {
				second = append(second, f.Detail)
			}
			more = append(more, strings.Join(second, "; "))
		}
		opaErrors, _ := p.Members["errors"].([]any)
		for _, e := range opaErrors {
			items = append(items, text(e))
		}
		if p.Detail != "" && !repeats(p.Detail, items) {
			fmt.Fprintf(w, "  %s\n", p.Detail)
		}
		for i, it := range items {
			fmt.Fprintf(w, "  - %s\n", it)
			if i < len(more) && more[i] != "" {
				fmt.Fprintf(w, "    %s\n", more[i])
			}
		}
		var extra []string
		for k := range p.Members {
			if !slices.Contains(standardMembers, k) && (k != "errors" || opaErrors == nil) {
				extra = append(extra, k)
			}
		}
		slices.Sort(extra)
		for _, k := range extra {
			if v := text(p.Members[k]); v != "" {
				fmt.Fprintf(w, "  %s: %s\n", k, v)
			}
		}
	case errors.As(err, &u):
		fmt.Fprintf(w, "steward: %s\n", u.Msg)
		if cmdPath != "" {
			fmt.Fprintf(w, "Run '%s --help' for usage.\n", strings.TrimSpace(cmdPath))
		}
	default:
		fmt.Fprintf(w, "steward: %v\n", err)
	}
}

// repeats says whether a problem's detail is only its items again, after a
// prefix: "invalid argument: a: x; b: y" for the fields a and b.
func repeats(detail string, items []string) bool {
	if len(items) == 0 {
		return false
	}
	_, rest, ok := strings.Cut(detail, ": ")
	return ok && rest == strings.Join(items, "; ")
}
