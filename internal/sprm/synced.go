package sprm

import (
	"encoding/json"
	"fmt"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/pkg/provider"
)

// checkSync adds to errs what is wrong with a report's sync
// (provider.Sync's limits), under field.
func checkSync(errs *invalid.Errors, field string, s *provider.Sync) {
	switch {
	case s == nil:
	case s.InSync && len(s.Differences) > 0:
		errs.Add(field+".differences", "must be empty when in_sync is true")
	case !s.InSync && len(s.Differences) == 0:
		errs.Add(field+".differences", "must name what differs when in_sync is false")
	case len(s.Differences) > provider.MaxSyncDifferences:
		errs.Add(field+".differences", "has %d entries; at most %d are allowed", len(s.Differences), provider.MaxSyncDifferences)
	default:
		for i, d := range s.Differences {
			if d == "" || len(d) > provider.MaxSyncDifferenceLen {
				errs.Add(fmt.Sprintf("%s.differences[%d]", field, i), "must be 1 to %d bytes", provider.MaxSyncDifferenceLen)
			}
		}
	}
}

// syncedArg is the synced argument of a status write: nil (NULL) keeps the
// instance's.
func syncedArg(s *provider.Sync) json.RawMessage {
	if s == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil // a Sync always encodes
	}
	return b
}

// decodeSync reads a stored sync; NULL is none.
func decodeSync(raw json.RawMessage) (*provider.Sync, error) {
	if raw == nil {
		return nil, nil
	}
	var s provider.Sync
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("read synced: %w", err)
	}
	return &s, nil
}
