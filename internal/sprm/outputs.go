package sprm

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/pkg/provider"
)

// outputName is what an output may be called: the identifiers the
// provider contract allows.
var outputName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// checkOutputs adds to errs what is wrong with a provider's outputs
// (provider.Outputs' limits), under field.
func checkOutputs(errs *invalid.Errors, field string, out provider.Outputs) {
	if len(out) > provider.MaxOutputs {
		errs.Add(field, "has %d outputs; at most %d are allowed", len(out), provider.MaxOutputs)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(out)) {
		if !outputName.MatchString(k) {
			errs.Add(field, "output name %q must match %s", k, outputName)
			continue
		}
		switch v := out[k].(type) {
		case string:
			if len(v) > provider.MaxOutputLen {
				errs.Add(field+"."+k, "is longer than %d bytes", provider.MaxOutputLen)
			}
		case float64, bool, json.Number, int, int64:
		default:
			errs.Add(field+"."+k, "must be a string, a number or a boolean")
		}
	}
}

// answeredOutputs are the outputs of a provider's answer to a create, an
// update or a read, as they are stored: ones the contract does not allow
// are dropped with a warning, not the answer (the instance exists).
func (s *Service) answeredOutputs(ctx context.Context, providerName, id string, out provider.Outputs) provider.Outputs {
	var errs invalid.Errors
	checkOutputs(&errs, "outputs", out)
	if err := errs.Err(); err != nil {
		s.log.WarnContext(ctx, "provider answered outputs the contract does not allow; ignored", "provider", providerName,
			"instance_id", id, "error", err)
		return nil
	}
	return out
}

// outputsArg is the outputs argument of a status write: nil (NULL) keeps
// the instance's.
func outputsArg(out provider.Outputs) json.RawMessage {
	if out == nil {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil // checked values always encode
	}
	return b
}

// decodeOutputs reads stored outputs; NULL is none.
func decodeOutputs(raw json.RawMessage) (provider.Outputs, error) {
	if raw == nil {
		return nil, nil
	}
	var out provider.Outputs
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("read outputs: %w", err)
	}
	return out, nil
}

// sameOutputs reports whether an answer's outputs leave the stored ones
// as they are: none given, or equal as JSON values.
func sameOutputs(got provider.Outputs, stored json.RawMessage) bool {
	if got == nil {
		return true
	}
	have, err := decodeOutputs(stored)
	if err != nil || have == nil {
		return false
	}
	want, err := decodeOutputs(outputsArg(got)) // numbers as stored ones decode
	return err == nil && reflect.DeepEqual(want, have)
}

// InstanceOutputs returns what the orders of the instances with the given
// ids show of them, by id: the outputs and the last comparison with the
// spec (Outputs and Synced of a provider.Instance); instances with neither
// are left out.
func (s *Service) InstanceOutputs(ctx context.Context, ids []string) (map[string]provider.Instance, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.q.InstanceOutputs(ctx, s.cfg.DB, ids)
	if err != nil {
		return nil, fmt.Errorf("read instance outputs: %w", err)
	}
	out := make(map[string]provider.Instance, len(rows))
	for _, r := range rows {
		in := provider.Instance{InstanceID: r.ID}
		if in.Outputs, err = decodeOutputs(r.Outputs); err != nil {
			return nil, fmt.Errorf("instance %s: %w", r.ID, err)
		}
		if in.Synced, err = decodeSync(r.Synced); err != nil {
			return nil, fmt.Errorf("instance %s: %w", r.ID, err)
		}
		out[r.ID] = in
	}
	return out, nil
}
