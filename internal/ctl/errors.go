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
		if p.Detail != "" {
			fmt.Fprintf(w, "  %s\n", p.Detail)
		}
		for _, f := range p.Fields {
			fmt.Fprintf(w, "  - %s: %s\n", f.Field, f.Message)
		}
		var extra []string
		for k := range p.Members {
			if !slices.Contains(standardMembers, k) {
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
