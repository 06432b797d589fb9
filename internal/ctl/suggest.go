package ctl

import (
	"errors"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// closest returns, nearest first, at most n of the candidates a mistyped
// word may have meant: those that start with it, and those a few edits
// from it (a third of its length, at least one; a swap of two letters is
// one edit).
func closest(word string, candidates []string, n int) []string {
	word = strings.ToLower(word)
	limit := max(1, len([]rune(word))/3)
	type near struct {
		s string
		d int
	}
	var found []near
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := distance(word, lc)
		if word != "" && strings.HasPrefix(lc, word) {
			d = min(d, 1)
		}
		if d <= limit {
			found = append(found, near{c, d})
		}
	}
	slices.SortStableFunc(found, func(a, b near) int { return a.d - b.d })
	out := make([]string, 0, min(n, len(found)))
	for _, f := range found[:min(n, len(found))] {
		out = append(out, f.s)
	}
	return out
}

// distance is the edit distance between a and b in runes: insertions,
// deletions, substitutions and swaps of two neighbours, each one edit
// (the optimal string alignment distance).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// didYouMean is " (did you mean X?)" (or "X or Y?"), or "" when nothing
// is close.
func didYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(names, " or ") + "?)"
}

// FlagError is every command's flag error: a usage error (exit 2), and an
// unknown flag says which of the command's flags it may have meant
// (--sevrer, or -server with one dash: --server).
func FlagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	var notExist *pflag.NotExistError
	if errors.As(err, &notExist) {
		typed := notExist.GetSpecifiedName()
		if strings.HasPrefix(msg, "unknown shorthand flag") {
			typed = notExist.GetSpecifiedShortnames()
		}
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		var near []string
		if len([]rune(typed)) > 1 {
			near = closest(typed, names, 3)
		}
		for i, n := range near {
			near[i] = "--" + n
		}
		msg += didYouMean(near)
	}
	return &UsageError{Msg: msg}
}
