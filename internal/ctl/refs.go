package ctl

import (
	"slices"
	"strings"
)

// A ref is one resource a command line names: its kind and its id.
type ref struct {
	k  *kind
	id string
}

// parseRefs reads the resources a command names, in either of kubectl's
// forms: `KIND ID...` (k is the kind, refs may be empty: a list), or
// `KIND/ID...` as -o name prints them (k is nil; kinds may differ). A
// repair operation's id has two parts: repair-operations/APP/OPERATION.
func parseRefs(args []string) (k *kind, refs []ref, err error) {
	if len(args) == 0 {
		return nil, nil, usagef("name a KIND, or resources as KIND/ID")
	}
	if !strings.Contains(args[0], "/") {
		if k, err = findKind(args[0]); err != nil {
			return nil, nil, err
		}
		for _, id := range args[1:] {
			if err := checkKindID(k, id); err != nil {
				return nil, nil, err
			}
			refs = append(refs, ref{k: k, id: id})
		}
		return k, refs, nil
	}
	for _, a := range args {
		r, err := parseRef(a)
		if err != nil {
			return nil, nil, err
		}
		refs = append(refs, r)
	}
	return nil, refs, nil
}

// parseRef reads one KIND/ID.
func parseRef(arg string) (ref, error) {
	name, id, ok := strings.Cut(arg, "/")
	if !ok {
		return ref{}, usagef("%q: after a KIND/ID, every resource is named KIND/ID", arg)
	}
	k, err := findKind(name)
	if err != nil {
		return ref{}, err
	}
	if err := checkKindID(k, id); err != nil {
		return ref{}, err
	}
	return ref{k: k, id: id}, nil
}

// idOf is the id of a command's argument that names a resource of one of
// kinds: an id, or KIND/ID (catalog-item-instances/hello).
func idOf(arg string, kinds ...*kind) (string, error) {
	if !strings.Contains(arg, "/") {
		return arg, checkID(arg)
	}
	r, err := parseRef(arg)
	if err != nil {
		return "", err
	}
	if !slices.Contains(kinds, r.k) {
		return "", usagef("%q names %s; this command takes %s", arg, r.k.name, kinds[0].name)
	}
	return r.id, nil
}

// appInstanceID is the order id an app-instance command takes: an id,
// app-instances/ID or catalog-item-instances/ID.
func appInstanceID(arg string) (string, error) { return idOf(arg, appInstances, orders) }

// groupRefs splits refs into runs of one kind, in their order.
func groupRefs(refs []ref) [][]ref {
	var groups [][]ref
	for _, r := range refs {
		if n := len(groups); n > 0 && groups[n-1][0].k == r.k {
			groups[n-1] = append(groups[n-1], r)
			continue
		}
		groups = append(groups, []ref{r})
	}
	return groups
}
