package statemachine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/stewardhq/steward/internal/invalid"
)

// transferSyntax is what a compact transfer line looks like, for messages.
const transferSyntax = `"<source>[, <source>…] -> <target>: <trigger> [validate] [<operation>] [| <error> [<operation>]] [# description]"`

// compactOps are the operations as a compact transfer line spells them.
var compactOps = map[string]Operation{
	"promote":         OpPromote,
	"rollback":        OpRollback,
	"clear-candidate": OpClearCandidate,
	"clear-active":    OpClearActive,
	"clear-rollback":  OpClearRollback,
}

const compactOpList = "promote, rollback, clear-candidate, clear-active or clear-rollback"

// Expand returns the checked, normalized definition src describes and
// the compact form to store with it (nil when src is in full). Errors are
// an [*invalid.Error] whose fields name the member the client wrote: a
// compact definition's errors are named by the compact entry that
// produced the faulty part of the expansion (compact.transfers[2],
// compact.states.up), their message saying which part.
func (src Source) Expand() (Definition, json.RawMessage, error) {
	raw := bytes.TrimSpace(src.Compact)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		d := src.Definition.normalized()
		return d, nil, d.Validate()
	}
	var stored bytes.Buffer
	if err := json.Compact(&stored, raw); err != nil {
		return Definition{}, nil, invalid.New("compact", "must be a JSON object")
	}
	e, err := expandCompact(raw)
	if err != nil {
		return Definition{}, nil, err
	}
	if err := e.def.Validate(); err != nil {
		return Definition{}, nil, e.blame(err)
	}
	if err := src.agrees(e.def); err != nil {
		return Definition{}, nil, err
	}
	return e.def, stored.Bytes(), nil
}

// agrees refuses full members sent beside compact that differ from its
// expansion. Sending them equal is allowed, so that a GET's answer can be
// PUT back as it is.
func (src Source) agrees(d Definition) error {
	given := src.Definition.normalized()
	if (src.InitialState == "" || src.InitialState == d.InitialState) &&
		(src.States == nil || slices.Equal(given.States, d.States)) &&
		(src.Transfers == nil || slices.Equal(given.Transfers, d.Transfers)) {
		return nil
	}
	return invalid.New("compact", "initial_state, states and transfers differ from the expansion of compact: "+
		"send compact alone, or set compact to null to write the definition in full")
}

// refPattern finds the references to other parts of the expansion that
// validation messages make ("(transfers[3])").
var refPattern = regexp.MustCompile(`\b(states|transfers)\[[0-9]+\]`)

// expansion is a compact definition expanded, with where each part came from.
type expansion struct {
	def Definition
	// origin maps "initial_state", "states[i]" and "transfers[i]" of def
	// to the compact member that produced it.
	origin map[string]string
}

// blame renames the fields of a validation error of the expansion after
// the compact members that produced them.
func (e expansion) blame(err error) error {
	var ie *invalid.Error
	if !errors.As(err, &ie) {
		return err
	}
	out := &invalid.Error{}
	seen := map[invalid.Field]bool{}
	for _, f := range ie.Fields {
		key, rest := f.Field, ""
		if i := strings.IndexByte(key, '.'); i >= 0 {
			key, rest = key[:i], key[i+1:]
		}
		origin, ok := e.origin[key]
		if !ok {
			origin = "compact." + key
		}
		msg := refPattern.ReplaceAllStringFunc(f.Message, func(ref string) string { return cmp.Or(e.origin[ref], ref) })
		if rest != "" {
			msg = rest + ": " + msg
		}
		if nf := (invalid.Field{Field: origin, Message: msg}); !seen[nf] {
			seen[nf] = true
			out.Fields = append(out.Fields, nf)
		}
	}
	return out
}

func (e *expansion) addState(s State, origin string) {
	e.origin[fmt.Sprintf("states[%d]", len(e.def.States))] = origin
	e.def.States = append(e.def.States, s)
}

func (e *expansion) addTransfer(t Transfer, origin string) {
	e.origin[fmt.Sprintf("transfers[%d]", len(e.def.Transfers))] = origin
	e.def.Transfers = append(e.def.Transfers, t)
}

// compactLine is one parsed transfer line.
type compactLine struct {
	sources  []string
	transfer Transfer
}

// expandCompact parses the compact form and expands it, unchecked: states
// in the order written, then the transfers of each line (a "*" source
// standing for every state that is neither deleted nor the target), then
// each state's abort edge, then the on_delete edges. Syntax errors are an
// [*invalid.Error] naming compact.initial_state, compact.states.<name>,
// compact.transfers[i] or compact.on_delete.
func expandCompact(raw json.RawMessage) (expansion, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return expansion{}, invalid.New("compact", "must be an object with initial_state, states, transfers and on_delete")
	}
	var errs invalid.Errors
	e := expansion{origin: map[string]string{"initial_state": "compact.initial_state"}}
	if !decodeString(top["initial_state"], &e.def.InitialState) || e.def.InitialState == "" {
		errs.Add("compact.initial_state", "is required: the name of the state new orders enter")
	}
	type abort struct{ from, to string }
	var aborts []abort
	for _, cs := range decodeStates(top["states"], &errs) {
		field := "compact.states." + cs.name
		s, to, msg := parseState(cs.name, cs.spec)
		if msg != "" {
			errs.Add(field, "%s", msg)
			continue
		}
		e.addState(s, field)
		if to != "" {
			aborts = append(aborts, abort{cs.name, to})
		}
	}
	lines := decodeLines(top["transfers"], &errs)
	var onDelete string
	if v, ok := top["on_delete"]; ok && !decodeString(v, &onDelete) {
		errs.Add("compact.on_delete", "must be the name of the state a delete goes to")
	}
	if len(e.def.States) > MaxStates {
		errs.Add("compact.states", "must hold at most %d states, not %d", MaxStates, len(e.def.States))
	}
	if err := errs.Err(); err != nil {
		return expansion{}, err
	}
	for i, l := range lines {
		sources := l.sources
		if slices.Equal(sources, []string{"*"}) {
			sources = nil
			for _, s := range e.def.States {
				if !s.Deleted && s.Name != l.transfer.Target {
					sources = append(sources, s.Name)
				}
			}
		}
		if len(e.def.Transfers)+len(sources) > MaxTransfers {
			return expansion{}, invalid.New(fmt.Sprintf("compact.transfers[%d]", i),
				"the expansion passes %d transfers here, the most a lifecycle may have", MaxTransfers)
		}
		for _, src := range sources {
			t := l.transfer
			t.Source = src
			e.addTransfer(t, fmt.Sprintf("compact.transfers[%d]", i))
		}
	}
	for _, a := range aborts {
		e.addTransfer(Transfer{Source: a.from, Target: a.to, Trigger: TriggerAPI, TargetOperation: OpClearCandidate,
			Description: "abort: drop the candidate attributes"}, "compact.states."+a.from)
	}
	if onDelete != "" {
		if err := e.addOnDelete(onDelete); err != nil {
			return expansion{}, err
		}
	}
	e.def = e.def.normalized()
	return e, nil
}

// addOnDelete adds `X -> target: on_delete` for every state X that is not
// deleted, not purging, not the target and has no on_delete transfer yet.
func (e *expansion) addOnDelete(target string) error {
	if _, ok := e.def.State(target); !ok {
		return invalid.New("compact.on_delete", "state %q is not defined in compact.states", target)
	}
	has := map[string]bool{}
	for _, t := range e.def.Transfers {
		if t.Trigger == TriggerOnDelete {
			has[t.Source] = true
		}
	}
	for _, s := range e.def.States {
		if has[s.Name] || s.Deleted || s.PurgeResources || s.Name == target {
			continue
		}
		e.addTransfer(Transfer{Source: s.Name, Target: target, Trigger: TriggerOnDelete}, "compact.on_delete")
	}
	return nil
}

// decodeString reads a JSON string into dst; absent is fine.
func decodeString(raw json.RawMessage, dst *string) bool {
	return raw == nil || json.Unmarshal(raw, dst) == nil
}

type compactState struct{ name, spec string }

// decodeStates reads compact.states in the order written (a Go map would
// lose it, and the order is the expansion's).
func decodeStates(raw json.RawMessage, errs *invalid.Errors) []compactState {
	const want = `is required: an object of state name → spec, such as {"up": "active export success"}`
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); raw == nil || err != nil || tok != json.Delim('{') {
		errs.Add("compact.states", want)
		return nil
	}
	var out []compactState
	seen := map[string]bool{}
	keys := 0
	for dec.More() {
		keys++
		tok, err := dec.Token()
		if err != nil {
			errs.Add("compact.states", "%s", err)
			return nil
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			errs.Add("compact.states", "%s", err)
			return nil
		}
		var spec string
		switch {
		case json.Unmarshal(v, &spec) != nil:
			errs.Add("compact.states."+name, `must be a string of words such as "active export success"`)
		case seen[name]:
			errs.Add("compact.states."+name, "is given twice")
		default:
			seen[name] = true
			out = append(out, compactState{name, spec})
		}
	}
	if keys == 0 {
		errs.Add("compact.states", want)
	}
	return out
}

// decodeLines reads and parses compact.transfers; absent means none.
func decodeLines(raw json.RawMessage, errs *invalid.Errors) []compactLine {
	if raw == nil {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		errs.Add("compact.transfers", "must be an array of lines such as %s", transferSyntax)
		return nil
	}
	out := make([]compactLine, 0, len(items))
	for i, item := range items {
		field := fmt.Sprintf("compact.transfers[%d]", i)
		var line string
		if err := json.Unmarshal(item, &line); err != nil {
			errs.Add(field, "must be a string such as %s", transferSyntax)
			continue
		}
		l, msg := parseLine(line)
		if msg != "" {
			errs.Add(field, "%s", msg)
			continue
		}
		out = append(out, l)
	}
	return out
}

// parseState reads a state spec: a model state and the words export,
// purge, deleted, validate_self=candidate|active, a label and
// abort=<state>. It returns the state, the abort target ("" for none) and
// a message saying what was expected when the spec is wrong.
func parseState(name, spec string) (State, string, string) {
	const expected = "expected a model state (inactive, candidate, designed or active), export, purge, deleted, " +
		"validate_self=candidate|active, a label (info, success, warning or danger) or abort=<state>"
	s := State{Name: name}
	var abort string
	seen := map[string]bool{}
	for _, w := range strings.Fields(spec) {
		key, val, hasVal := strings.Cut(w, "=")
		if seen[key] {
			return State{}, "", fmt.Sprintf("%q is given twice", key)
		}
		seen[key] = true
		switch {
		case hasVal && key == "validate_self":
			if val != string(SetCandidate) && val != string(SetActive) {
				return State{}, "", fmt.Sprintf("validate_self=%s: expected validate_self=candidate or validate_self=active", val)
			}
			s.ValidateSelf = AttributeSet(val)
		case hasVal && key == "abort":
			if val == "" {
				return State{}, "", "abort=: expected abort=<state>, the state the abort edge goes to"
			}
			abort = val
		case !hasVal && slices.Contains(modelStates, ModelState(w)):
			if s.ModelState != "" {
				return State{}, "", fmt.Sprintf("has two model states, %s and %s: expected one", s.ModelState, w)
			}
			s.ModelState = ModelState(w)
		case !hasVal && slices.Contains(labels, Label(w)):
			if s.Label != "" {
				return State{}, "", fmt.Sprintf("has two labels, %s and %s: expected one", s.Label, w)
			}
			s.Label = Label(w)
		case w == "export":
			s.ExportResources = true
		case w == "purge":
			s.PurgeResources = true
		case w == "deleted":
			s.Deleted = true
		default:
			return State{}, "", fmt.Sprintf("unknown word %q: %s", w, expected)
		}
	}
	if s.ModelState == "" {
		return State{}, "", "has no model state: " + expected
	}
	return s, abort, ""
}

// parseLine reads one transfer line (see transferSyntax), returning a
// message saying what was expected when it is wrong.
func parseLine(line string) (compactLine, string) {
	var l compactLine
	line, desc, _ := strings.Cut(line, "#")
	l.transfer.Description = strings.TrimSpace(desc)
	lhs, rhs, ok := strings.Cut(line, "->")
	if !ok {
		return l, `no "->": expected ` + transferSyntax
	}
	targetPart, rest, ok := strings.Cut(rhs, ":")
	if !ok {
		return l, `no ":" after the target: expected ` + transferSyntax
	}
	l.transfer.Target = strings.TrimSpace(targetPart)
	if l.transfer.Target == "" || strings.ContainsAny(l.transfer.Target, " \t,") {
		return l, `expected one target state between "->" and ":"`
	}
	for src := range strings.SplitSeq(lhs, ",") {
		src = strings.TrimSpace(src)
		if src == "" || strings.ContainsAny(src, " \t") {
			return l, `expected source states separated by "," before "->"`
		}
		l.sources = append(l.sources, src)
	}
	if len(l.sources) > 1 && slices.Contains(l.sources, "*") {
		return l, `"*" stands for every state: expected it alone before "->"`
	}
	main, errPart, hasErr := strings.Cut(rest, "|")
	words := strings.Fields(main)
	if len(words) == 0 {
		return l, `expected a trigger after ":": ` + list(triggers)
	}
	l.transfer.Trigger = Trigger(words[0])
	if !slices.Contains(triggers, l.transfer.Trigger) {
		return l, fmt.Sprintf("unknown trigger %q: expected %s", words[0], list(triggers))
	}
	for _, w := range words[1:] {
		op, isOp := compactOps[w]
		switch {
		case w == "validate" && !l.transfer.Validate && l.transfer.TargetOperation == "":
			l.transfer.Validate = true
		case isOp && l.transfer.TargetOperation == "":
			l.transfer.TargetOperation = op
		default:
			return l, fmt.Sprintf(`unexpected %q after the trigger: expected [validate] [<operation>], in that order, `+
				`then "| <error state>"; the operations are %s`, w, compactOpList)
		}
	}
	if !hasErr {
		return l, ""
	}
	words = strings.Fields(errPart)
	if len(words) == 0 {
		return l, `expected an error state after "|"`
	}
	l.transfer.Error = words[0]
	if len(words) > 1 {
		op, isOp := compactOps[words[1]]
		if !isOp || len(words) > 2 {
			return l, fmt.Sprintf(`unexpected %q after the error state: expected at most one operation, %s`,
				strings.Join(words[1:], " "), compactOpList)
		}
		l.transfer.ErrorOperation = op
	}
	return l, ""
}
