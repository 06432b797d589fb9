package sprm

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

//go:generate go run github.com/stewardhq/steward/internal/store/querygen
//go:embed sql
var sqlFS embed.FS

type scanner = store.Scanner

// providerRow is a row of the queries that read whole providers: they
// return the same columns.
type providerRow interface {
	ProviderGetRow | ProviderGetByNameRow | ProviderListRow | ProviderListDueRow | ProviderLockByNameRow |
		ProviderKeyShareByNameRow
}

// providerFromRow makes a Provider of a row read (err is the read's error).
func providerFromRow[R providerRow](row R, err error) (Provider, error) {
	if errors.Is(err, store.ErrNotFound) {
		return Provider{}, ErrProviderNotFound
	}
	if err != nil {
		return Provider{}, fmt.Errorf("read provider: %w", err)
	}
	r := ProviderGetRow(row)
	p := Provider{ID: r.ID, Name: r.Name, Endpoint: r.Endpoint, Status: r.Status,
		Health: HealthRecord{ConsecutiveFailures: int(r.ConsecutiveFailures), Message: r.HealthMessage,
			LastCheckTime: r.LastCheckTime},
		nextCheckTime: r.NextCheckTime, Version: r.Version, CreateTime: r.CreateTime, UpdateTime: r.UpdateTime,
		PreviousEndpoint: r.PreviousEndpoint, EndpointChangeTime: r.EndpointChangeTime, CallToken: r.CallToken}
	if err := unmarshalAll(map[*json.RawMessage]any{&r.ServiceTypes: &p.ServiceTypes, &r.Metadata: &p.Metadata,
		&r.Capacity: &p.Capacity, &r.Operations: &p.Operations, &r.Projects: &p.Projects}); err != nil {
		return Provider{}, fmt.Errorf("read provider %s: %w", p.ID, err)
	}
	return p, nil
}

// fromRows makes values of the rows a list query read (err is the read's
// error), each by from.
func fromRows[R, T any](rows []R, err error, from func(R, error) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(rows))
	for _, row := range rows {
		v, err := from(row, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// scanProvider reads a row of ProviderList, for store.ListPage.
func scanProvider(row scanner) (Provider, error) {
	var r ProviderListRow
	err := row.Scan(&r.ID, &r.Name, &r.Endpoint, &r.ServiceTypes, &r.Metadata, &r.Capacity, &r.Operations, &r.Status,
		&r.ConsecutiveFailures, &r.HealthMessage, &r.LastCheckTime, &r.NextCheckTime,
		&r.Version, &r.CreateTime, &r.UpdateTime, &r.PreviousEndpoint, &r.EndpointChangeTime, &r.CallToken, &r.Projects)
	return providerFromRow(r, err)
}

// instanceRow is a row of the queries that read whole instances.
type instanceRow interface {
	InstanceGetRow | InstanceListRow
}

// instanceFromRow makes an Instance of a row read (err is the read's error).
func instanceFromRow[R instanceRow](row R, err error) (Instance, error) {
	if errors.Is(err, store.ErrNotFound) {
		return Instance{}, ErrInstanceNotFound
	}
	if err != nil {
		return Instance{}, fmt.Errorf("read instance: %w", err)
	}
	r := InstanceGetRow(row)
	in := Instance{ID: r.ID, Project: r.Project, Name: r.Name, ProviderName: r.ProviderName, ServiceType: r.ServiceType,
		Status: provider.Status(r.Status), StatusMessage: r.StatusMessage, statusObservedTime: r.StatusObservedTime,
		Version: r.Version, CreateTime: r.CreateTime, UpdateTime: r.UpdateTime, DeletedAt: r.DeletedAt,
		RestartCount: r.RestartCount, DeleteTime: r.DeleteTime}
	if r.CleanupTaskID != nil && r.CleanupTaskStatus != nil {
		in.Deletion = &Deletion{Status: *r.CleanupTaskStatus, CleanupTaskID: *r.CleanupTaskID}
	}
	if err := json.Unmarshal(r.Spec, &in.Spec); err != nil {
		return Instance{}, fmt.Errorf("read instance %s spec: %w", in.ID, err)
	}
	if in.Outputs, err = decodeOutputs(r.Outputs); err != nil {
		return Instance{}, fmt.Errorf("instance %s: %w", in.ID, err)
	}
	if in.Outputs == nil {
		in.Outputs = provider.Outputs{}
	}
	if in.Synced, err = decodeSync(r.Synced); err != nil {
		return Instance{}, fmt.Errorf("instance %s: %w", in.ID, err)
	}
	return in, nil
}

// scanListedInstance reads a row of InstanceList (for store.ListPage) or
// of InstanceGet (for a GET, showInstance): its stored documents are kept
// as they are, for the hand encoder ([instanceView.appendJSON]), not
// decoded (a third of a page's time went to decoding them and encoding
// them again).
func scanListedInstance(row scanner) (Instance, error) {
	var r InstanceListRow
	err := row.Scan(&r.ID, &r.Project, &r.Name, &r.ProviderName, &r.ServiceType, &r.Spec, &r.Status,
		&r.StatusMessage, &r.StatusObservedTime, &r.Version, &r.CreateTime, &r.UpdateTime, &r.DeletedAt,
		&r.CleanupTaskID, &r.CleanupTaskStatus, &r.RestartCount, &r.DeleteTime, &r.Outputs, &r.Synced)
	if err != nil {
		return Instance{}, fmt.Errorf("read instance: %w", err)
	}
	in := Instance{ID: r.ID, Project: r.Project, Name: r.Name, ProviderName: r.ProviderName, ServiceType: r.ServiceType,
		Status: provider.Status(r.Status), StatusMessage: r.StatusMessage, statusObservedTime: r.StatusObservedTime,
		Version: r.Version, CreateTime: r.CreateTime, UpdateTime: r.UpdateTime, DeletedAt: r.DeletedAt,
		RestartCount: r.RestartCount, DeleteTime: r.DeleteTime, specJSON: r.Spec, outputsJSON: r.Outputs,
		syncedJSON: r.Synced}
	if r.CleanupTaskID != nil && r.CleanupTaskStatus != nil {
		in.Deletion = &Deletion{Status: *r.CleanupTaskStatus, CleanupTaskID: *r.CleanupTaskID}
	}
	if in.outputsJSON == nil {
		in.outputsJSON = json.RawMessage("{}") // none yet: {} as a whole read says
	}
	return in, nil
}

// taskRow is a row of the queries that read whole cleanup tasks.
type taskRow interface {
	CleanupTaskGetRow | CleanupTaskGetByInstanceRow | CleanupTaskListRow | CleanupTaskClaimRow |
		CleanupTaskListByOrderRow
}

// taskFromRow makes a CleanupTask of a row read (err is the read's error).
func taskFromRow[R taskRow](row R, err error) (CleanupTask, error) {
	if errors.Is(err, store.ErrNotFound) {
		return CleanupTask{}, ErrCleanupTaskNotFound
	}
	if err != nil {
		return CleanupTask{}, fmt.Errorf("read cleanup task: %w", err)
	}
	r := CleanupTaskGetRow(row)
	return CleanupTask{ID: r.ID, InstanceID: r.InstanceID, OrderID: r.OrderID, ProviderName: r.ProviderName, ServiceType: r.ServiceType,
		RequestedAt: r.RequestedAt, RetryCount: int(r.RetryCount), Status: r.Status, LastAttempt: r.LastAttempt,
		LastError: r.LastError, CreateTime: r.CreateTime, UpdateTime: r.UpdateTime}, nil
}

// scanTask reads a row of CleanupTaskList, for store.ListPage.
func scanTask(row scanner) (CleanupTask, error) {
	var r CleanupTaskListRow
	err := row.Scan(&r.ID, &r.InstanceID, &r.OrderID, &r.ProviderName, &r.ServiceType, &r.RequestedAt, &r.RetryCount,
		&r.Status, &r.LastAttempt, &r.LastError, &r.CreateTime, &r.UpdateTime)
	return taskFromRow(r, err)
}

func unmarshalAll(m map[*json.RawMessage]any) error {
	for raw, dst := range m {
		if err := json.Unmarshal(*raw, dst); err != nil {
			return err
		}
	}
	return nil
}
