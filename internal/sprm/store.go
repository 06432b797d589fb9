package sprm

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

//go:embed sql
var sqlFS embed.FS

type scanner = store.Scanner

func scanProvider(row scanner) (Provider, error) {
	var p Provider
	var types, meta, capacity, ops json.RawMessage
	err := row.Scan(&p.ID, &p.Name, &p.Endpoint, &types, &meta, &capacity, &ops, &p.Status,
		&p.Health.ConsecutiveFailures, &p.Health.Message, &p.Health.LastCheckTime, &p.nextCheckTime,
		&p.Version, &p.CreateTime, &p.UpdateTime, &p.PreviousEndpoint, &p.EndpointChangeTime)
	if errors.Is(err, store.ErrNotFound) {
		return Provider{}, ErrProviderNotFound
	}
	if err != nil {
		return Provider{}, fmt.Errorf("read provider: %w", err)
	}
	if err := unmarshalAll(map[*json.RawMessage]any{&types: &p.ServiceTypes, &meta: &p.Metadata,
		&capacity: &p.Capacity, &ops: &p.Operations}); err != nil {
		return Provider{}, fmt.Errorf("read provider %s: %w", p.ID, err)
	}
	return p, nil
}

func scanInstance(row scanner) (Instance, error) {
	var in Instance
	var spec json.RawMessage
	var status string
	var taskID, taskStatus *string
	err := row.Scan(&in.ID, &in.Project, &in.Name, &in.ProviderName, &in.ServiceType, &spec, &status,
		&in.StatusMessage, &in.statusObservedTime, &in.Version, &in.CreateTime, &in.UpdateTime, &in.DeletedAt,
		&taskID, &taskStatus, &in.RestartCount, &in.DeleteTime)
	if errors.Is(err, store.ErrNotFound) {
		return Instance{}, ErrInstanceNotFound
	}
	if err != nil {
		return Instance{}, fmt.Errorf("read instance: %w", err)
	}
	in.Status = provider.Status(status)
	if taskID != nil && taskStatus != nil {
		in.Deletion = &Deletion{Status: *taskStatus, CleanupTaskID: *taskID}
	}
	if err := json.Unmarshal(spec, &in.Spec); err != nil {
		return Instance{}, fmt.Errorf("read instance %s spec: %w", in.ID, err)
	}
	return in, nil
}

func scanTask(row scanner) (CleanupTask, error) {
	var t CleanupTask
	err := row.Scan(&t.ID, &t.InstanceID, &t.ProviderName, &t.ServiceType, &t.RequestedAt, &t.RetryCount,
		&t.Status, &t.LastAttempt, &t.LastError, &t.CreateTime, &t.UpdateTime)
	if errors.Is(err, store.ErrNotFound) {
		return CleanupTask{}, ErrCleanupTaskNotFound
	}
	if err != nil {
		return CleanupTask{}, fmt.Errorf("read cleanup task: %w", err)
	}
	return t, nil
}

func unmarshalAll(m map[*json.RawMessage]any) error {
	for raw, dst := range m {
		if err := json.Unmarshal(*raw, dst); err != nil {
			return err
		}
	}
	return nil
}
