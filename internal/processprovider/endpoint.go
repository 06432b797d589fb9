package processprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// endpointFile is the name, in an instance's directory, of the endpoint
// metadata a repair re-delivers: what runs where, for whoever connects to
// the runtime.
const endpointFile = "endpoint.json"

// endpoint is the content of endpoint.json.
type endpoint struct {
	InstanceID   string           `json:"instance_id"`
	Members      []endpointMember `json:"members"`
	ObservedTime time.Time        `json:"observed_time"`
}

// endpointMember is one member in endpoint.json; pid is 0 when no process
// runs.
type endpointMember struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	PID     int    `json:"pid"`
	Healthy bool   `json:"healthy"`
}

// writeEndpoint writes endpoint.json into dir atomically (a temporary file
// renamed over it), so a reader sees the old content or the new, never a
// part. It does not create dir: a deleted instance's directory must stay
// gone.
func writeEndpoint(dir, instanceID string, members []memberView, now time.Time) (string, error) {
	e := endpoint{InstanceID: instanceID, Members: make([]endpointMember, len(members)), ObservedTime: now.UTC()}
	for i, v := range members {
		e.Members[i] = endpointMember{ID: v.id, Role: v.role, PID: v.pid, Healthy: !v.failed}
	}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", endpointFile, err)
	}
	f, err := os.CreateTemp(dir, "."+endpointFile+"-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", endpointFile, err)
	}
	_, err = f.Write(append(data, '\n'))
	err = errors.Join(err, f.Sync(), f.Close())
	name := filepath.Join(dir, endpointFile)
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("write %s: %w", endpointFile, err)
	}
	return name, nil
}
