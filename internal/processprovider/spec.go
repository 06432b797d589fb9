package processprovider

import (
	"encoding/json"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/stewardhq/steward/internal/invalid"
)

// restartPolicy says which exits of a process the supervisor restarts.
type restartPolicy string

// The values of spec.restart_policy.
const (
	restartAlways    restartPolicy = "always"
	restartOnFailure restartPolicy = "on_failure"
	restartNever     restartPolicy = "never"
)

// Defaults of the optional spec fields.
const (
	defaultRestartPolicy = restartOnFailure
	defaultMaxRestarts   = 5
)

// knownSpecFields are the top-level spec fields the provider reads; any other
// (image, resources, network) is accepted and ignored.
var knownSpecFields = []string{"process", "restart_policy", "max_restarts", "members"}

// instanceIDPattern keeps an instance id usable as one path element under
// WorkDir: no separators, no "." or "..". Steward's ids are UUIDs.
var instanceIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// spec is what the provider runs for one instance, validated.
type spec struct {
	// argv is spec.process.command followed by spec.process.args.
	argv []string
	// env holds NAME=value pairs from spec.process.env, in order.
	env         []string
	policy      restartPolicy
	maxRestarts int
	// members are spec.members in order; nil for an instance without them,
	// which runs one process.
	members []memberSpec
}

// equal reports whether s and o run the same: the same command, arguments,
// environment and restart rules.
func (s spec) equal(o spec) bool {
	return slices.Equal(s.argv, o.argv) && slices.Equal(s.env, o.env) &&
		s.policy == o.policy && s.maxRestarts == o.maxRestarts && slices.Equal(s.members, o.members)
}

// wireSpec is the part of DCM's ContainerSpec this provider reads.
type wireSpec struct {
	Process *struct {
		Command []string `json:"command"`
		Args    []string `json:"args"`
		Env     []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"env"`
	} `json:"process"`
	RestartPolicy *string       `json:"restart_policy"`
	MaxRestarts   *int          `json:"max_restarts"`
	Members       *[]wireMember `json:"members"`
}

// checkInstanceID refuses an id that cannot name a work directory.
func checkInstanceID(id string) error {
	if !instanceIDPattern.MatchString(id) {
		return &RequestError{Invalid: invalid.New("instance_id",
			"must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit")}
	}
	return nil
}

// parseSpec reads and validates a create request's spec. The command is
// required unless requireCommand is false (no-op mode). It also returns the
// top-level fields it ignores, sorted.
func parseSpec(raw map[string]any, requireCommand bool) (spec, []string, error) {
	ignored := slices.Sorted(maps.Keys(raw))
	ignored = slices.DeleteFunc(ignored, func(k string) bool { return slices.Contains(knownSpecFields, k) })

	// A JSON round trip decodes both a map straight from the wire
	// ([]any, float64) and one built in Go ([]string, int).
	b, err := json.Marshal(raw)
	if err != nil {
		return spec{}, nil, &RequestError{Invalid: invalid.New("spec", "is not representable as JSON: %v", err)}
	}
	var w wireSpec
	if err := json.Unmarshal(b, &w); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return spec{}, nil, &RequestError{Invalid: invalid.New("spec."+te.Field, "must be %s, not %s", jsonKind(te.Type.Kind().String()), te.Value)}
		}
		return spec{}, nil, &RequestError{Invalid: invalid.New("spec", "cannot be read: %v", err)}
	}

	var es invalid.Errors
	s := spec{policy: defaultRestartPolicy, maxRestarts: defaultMaxRestarts}
	switch {
	case w.Process == nil || len(w.Process.Command) == 0:
		if requireCommand {
			es.Add("spec.process.command", "is required: the executable and its leading arguments")
		}
	case w.Process.Command[0] == "":
		es.Add("spec.process.command[0]", "must name an executable")
	}
	if w.Process != nil {
		s.argv = append(slices.Clone(w.Process.Command), w.Process.Args...)
		for i, e := range w.Process.Env {
			if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
				es.Add("spec.process.env["+strconv.Itoa(i)+"].name", "must be a non-empty name without '='")
				continue
			}
			s.env = append(s.env, e.Name+"="+e.Value)
		}
	}
	if w.RestartPolicy != nil {
		switch p := restartPolicy(*w.RestartPolicy); p {
		case restartAlways, restartOnFailure, restartNever:
			s.policy = p
		default:
			es.Add("spec.restart_policy", "must be always, on_failure or never")
		}
	}
	if w.MaxRestarts != nil {
		if *w.MaxRestarts < 0 {
			es.Add("spec.max_restarts", "must not be negative")
		}
		s.maxRestarts = *w.MaxRestarts
	}
	if w.Members != nil {
		s.members = parseMembers(*w.Members, &es)
	}
	if err := es.Err(); err != nil {
		ie, _ := errors.AsType[*invalid.Error](err)
		return spec{}, nil, &RequestError{Invalid: ie}
	}
	return s, ignored, nil
}

// jsonKind names a Go kind in JSON's words.
func jsonKind(goKind string) string {
	switch goKind {
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "string":
		return "a string"
	case "int", "int64":
		return "an integer"
	}
	return "a " + goKind
}
