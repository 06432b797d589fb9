package sprm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/audit"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/limits"
	"github.com/stewardhq/steward/internal/resourceid"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// recordTimeout bounds the writes that must happen after a provider call
// even if the caller went away: recording the outcome, or queueing cleanup.
const recordTimeout = 10 * time.Second

// CreateParams asks for a new instance on a provider.
type CreateParams struct {
	// ID is the instance id; empty generates a UUID.
	ID           string
	Project      string
	ProviderName string
	// Spec must name its service type in spec.service_type and satisfy that
	// type's schema (additional properties allowed).
	Spec     map[string]any
	Metadata provider.CreateMetadata
	// Resume is for a durable caller that retries under the same ID (a
	// job): an intent an earlier attempt recorded is resolved instead of
	// refused with ErrInstanceExists (ask the provider whether it holds the
	// id: record what it holds, or create it again), and an unknown outcome
	// is left for the next attempt to resolve (OutcomeUnknownError with
	// Resolvable) instead of queued for cleanup.
	Resume bool
	// Source, for a provider registered with the export operation, asks it
	// to fill the instance with another's data (a rehydration). It is sent,
	// never stored: its token is a secret.
	Source *provider.ExportSource
	// AnsweredTx, when set, runs in the transaction that records the
	// provider's answer, with the status recorded: a caller's own record
	// of the answer then commits with it, in no transaction of its own.
	AnsweredTx func(ctx context.Context, tx *store.Tx, status provider.Status) error
}

// Create runs the seed's create flow: look the provider up (404), check its
// health (503), validate the spec (400), record the intent, call the
// provider, record its answer. A refusal is forwarded as *ProviderError; an
// unknown outcome is *OutcomeUnknownError with the instance queued for
// cleanup. A retried create with the same ID finds the first one
// (ErrInstanceExists), so it never provisions twice.
func (s *Service) Create(ctx context.Context, p CreateParams) (Instance, error) {
	serviceType, err := s.validateCreate(ctx, &p)
	if err != nil {
		s.metrics.creates.WithLabelValues("rejected").Inc()
		return Instance{}, err
	}
	var prov Provider
	var resume bool
	err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		resume = false
		prov, err = providerFromRow(s.q.ProviderKeyShareByName(ctx, tx, p.ProviderName))
		if err != nil {
			return err
		}
		if !prov.Serves(serviceType) {
			return invalid.New("provider_name", "provider %q does not serve service type %q", p.ProviderName, serviceType)
		}
		if !usable(prov) {
			return fmt.Errorf("%w: %q is %s", ErrProviderUnavailable, prov.Name, prov.Status)
		}
		t := s.now()
		n, err := s.q.InstanceInsert(ctx, tx, InstanceInsertParams{ID: p.ID, Project: p.Project, Name: instanceName(p.Spec),
			ProviderName: prov.Name, ServiceType: serviceType, Spec: store.JSON(p.Spec), CreateTime: t, UpdateTime: t,
			OrderID: p.Metadata.OrderID})
		switch {
		case err != nil:
			return err
		case n == 0 && p.Resume:
			resume = true
		case n == 0:
			return fmt.Errorf("%w: %s", ErrInstanceExists, p.ID)
		}
		return nil
	})
	if err != nil {
		s.metrics.creates.WithLabelValues("rejected").Inc()
		return Instance{}, err
	}
	if resume {
		in, done, err := s.resolve(ctx, p, prov)
		if done || err != nil {
			return in, err
		}
		// The provider does not hold it: create it again, under the same id.
	}

	got, err := s.cfg.Providers.Create(prov.calling(ctx), prov.Endpoint, provider.CreateRequest{
		InstanceID: p.ID, ServiceType: serviceType, Spec: p.Spec, Metadata: p.Metadata, Source: p.Source,
	})
	// From here the caller's ctx may be gone; the outcome must still be written.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err != nil {
		return Instance{}, s.createFailed(wctx, p, prov, serviceType, err)
	}
	return s.recordCreated(wctx, p, prov, serviceType, got)
}

// recordCreated records the provider's answer to a create (or, resolving,
// to a get). An answer that cannot be written leaves the outcome unknown.
func (s *Service) recordCreated(ctx context.Context, p CreateParams, prov Provider, serviceType string,
	got provider.Instance) (Instance, error) {
	// An answer, not a request: a message past the bound of a report's
	// is kept cut short rather than refused.
	got.Message = limits.Truncate(got.Message, limits.MaxMessage)
	status := got.Status
	if !status.Valid() || status == provider.StatusPending || status == provider.StatusUnknown {
		status = provider.StatusProvisioning
	}
	t := s.now()
	outputs := outputsArg(s.answeredOutputs(ctx, prov.Name, p.ID, got.Outputs))
	arg := InstanceRecordCreatedParams{Status: string(status), StatusMessage: got.Message, UpdateTime: t, StatusTime: &t,
		ResyncTime: s.resyncDue(status, t), Outputs: outputs, ID: p.ID}
	_, in, err := s.setStatus(ctx, InstanceStatus{InstanceID: p.ID, Status: status, Message: got.Message},
		func(tx *store.Tx) ([]string, error) {
			orders, err := s.q.InstanceRecordCreated(ctx, tx, arg)
			if err == nil && len(orders) == 0 {
				err = s.answeredLateTx(ctx, tx, p.ID, prov.Name, serviceType, outputs)
			}
			if err == nil && p.AnsweredTx != nil {
				err = p.AnsweredTx(ctx, tx, status)
			}
			return orders, err
		})
	if err != nil {
		s.metrics.creates.WithLabelValues("unknown").Inc()
		return Instance{}, s.outcomeUnknown(ctx, p, prov.Name, serviceType, ErrRecordFailed, err)
	}
	s.metrics.creates.WithLabelValues("accepted").Inc()
	return in, nil
}

// answeredLateTx handles a create's answer that came after something else
// settled the instance (InstanceRecordCreated recorded nothing). A status
// report got there first: the answer's outputs are kept all the same,
// unless the report brought its own (newer). Or the instance's deletion
// went ahead meanwhile (its delete time is set, whatever a report has made
// of its status since): its provider may have answered the delete 404
// while it was still making the instance, and hold it now. Its deletion is
// queued again (cleanup), or it could be left there, an orphan nobody knows
// of; when the delete came after the make, the task's call finds nothing,
// which is done.
func (s *Service) answeredLateTx(ctx context.Context, tx *store.Tx, id, providerName, serviceType string,
	outputs json.RawMessage) error {
	deleting, err := s.q.InstanceDeletionAsked(ctx, tx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil // a refused intent, removed
	case err != nil:
		return err
	case deleting:
		s.log.WarnContext(ctx, "create answered after its instance's deletion went ahead; the provider may hold it: cleanup queued",
			"instance_id", id, "provider", providerName)
		_, err := s.enqueueCleanupTx(ctx, tx, id, providerName, serviceType)
		return err
	case outputs != nil:
		_, err := s.q.InstanceKeepAnsweredOutputs(ctx, tx,
			InstanceKeepAnsweredOutputsParams{Outputs: outputs, UpdateTime: s.now(), ID: id})
		return err
	}
	return nil
}

// resolve settles an intent an earlier attempt recorded (Resume). done is
// set when it is settled: accepted earlier (the instance), given up (its
// cleanup was queued: a final OutcomeUnknownError), or found on the
// provider (recorded now). Not done and no error: the provider does not
// hold the id, so it must be created again.
func (s *Service) resolve(ctx context.Context, p CreateParams, prov Provider) (Instance, bool, error) {
	in, err := s.instance(ctx, "", p.ID)
	if err != nil {
		return Instance{}, true, err
	}
	switch {
	case in.Deletion != nil || in.DeletedAt != nil:
		return Instance{}, true, &OutcomeUnknownError{InstanceID: p.ID, Kind: ErrProviderUnreachable,
			Err: errors.New("an earlier create of this instance was given up and queued for cleanup")}
	case in.Status != provider.StatusPending && in.Status != provider.StatusUnknown:
		return in, true, nil
	}
	got, err := s.cfg.Providers.Get(prov.calling(ctx), prov.Endpoint, p.ID)
	switch {
	case errors.Is(err, provider.ErrNotFound):
		s.log.InfoContext(ctx, "create of unknown outcome: the provider does not hold the instance; creating it again",
			"instance_id", p.ID, "provider", prov.Name)
		return Instance{}, false, nil
	case err != nil:
		s.metrics.creates.WithLabelValues("unknown").Inc()
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
		return Instance{}, true, s.outcomeUnknown(wctx, p, prov.Name, in.ServiceType, unknownKind(err), err)
	}
	s.log.InfoContext(ctx, "create of unknown outcome: the provider holds the instance; recording it",
		"instance_id", p.ID, "provider", prov.Name, "status", got.Status)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	in, err = s.recordCreated(wctx, p, prov, in.ServiceType, got)
	return in, true, err
}

// Abandon gives up resolving a create of unknown outcome (the caller's
// last attempt): the instance is marked UNKNOWN and queued for cleanup, so
// nothing stays orphaned on the provider. An instance whose create was
// accepted, or already queued, is left as it is.
func (s *Service) Abandon(ctx context.Context, id string) error {
	in, err := s.instance(ctx, "", id)
	if errors.Is(err, ErrInstanceNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if in.Deletion != nil || (in.Status != provider.StatusPending && in.Status != provider.StatusUnknown) {
		return nil
	}
	return s.queueUnknown(ctx, id, in.ProviderName, in.ServiceType, errors.New("its creator gave up"))
}

func unknownKind(err error) error {
	if errors.Is(err, provider.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return ErrProviderTimeout
	}
	return ErrProviderUnreachable
}

// outcomeUnknown handles a create whose outcome is unknown: queued for
// cleanup, or, for a resuming caller, marked UNKNOWN for its next attempt.
func (s *Service) outcomeUnknown(ctx context.Context, p CreateParams, providerName, serviceType string, kind, cause error) error {
	if !p.Resume {
		_ = s.queueUnknown(ctx, p.ID, providerName, serviceType, cause)
		return &OutcomeUnknownError{InstanceID: p.ID, Kind: kind, Err: cause}
	}
	if _, err := s.q.InstanceSetStatus(ctx, s.cfg.DB, InstanceSetStatusParams{Status: string(provider.StatusUnknown),
		StatusMessage: "create outcome unknown (" + cause.Error() + "); resolving", UpdateTime: s.now(),
		ResyncTime: noResync, ID: p.ID}); err != nil {
		// Still PENDING: the next attempt resolves it all the same.
		s.log.WarnContext(ctx, "mark a create of unknown outcome", "instance_id", p.ID, "error", err)
	}
	s.log.WarnContext(ctx, "create outcome unknown; the next attempt resolves it", "instance_id", p.ID,
		"provider", providerName, "cause", cause)
	return &OutcomeUnknownError{InstanceID: p.ID, Kind: kind, Err: cause, Resolvable: true}
}

// createFailed handles a provider call that did not succeed: a refusal
// removes the intent; anything else leaves the outcome unknown.
func (s *Service) createFailed(ctx context.Context, p CreateParams, prov Provider, serviceType string, err error) error {
	id := p.ID
	var refused *provider.ResponseError
	if errors.As(err, &refused) {
		s.metrics.creates.WithLabelValues("refused").Inc()
		if _, derr := s.q.InstanceDeleteIntent(ctx, s.cfg.DB, id); derr != nil {
			// The sweep will queue it for cleanup; the refusal is still the answer.
			s.log.ErrorContext(ctx, "remove refused intent", "instance_id", id, "error", derr)
		}
		return refusal(prov, refused)
	}
	s.metrics.creates.WithLabelValues("unknown").Inc()
	return s.outcomeUnknown(ctx, p, prov.Name, serviceType, unknownKind(err), err)
}

// queueUnknown marks an instance whose creation outcome is unknown and queues
// its deletion. If even that fails, the periodic sweep finds the intent.
func (s *Service) queueUnknown(ctx context.Context, id, providerName, serviceType string, cause error) error {
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		if _, err := s.q.InstanceSetStatus(ctx, tx, InstanceSetStatusParams{Status: string(provider.StatusUnknown),
			StatusMessage: "create outcome unknown (" + cause.Error() + "); queued for cleanup", UpdateTime: s.now(),
			ResyncTime: noResync, ID: id}); err != nil {
			return err
		}
		_, err := s.enqueueCleanupTx(ctx, tx, id, providerName, serviceType)
		return err
	})
	if err != nil {
		s.log.ErrorContext(ctx, "queue cleanup of an instance with unknown outcome; the sweep will retry",
			"instance_id", id, "provider", providerName, "error", err)
		return err
	}
	s.log.WarnContext(ctx, "create outcome unknown; instance queued for cleanup", "instance_id", id,
		"provider", providerName, "cause", cause)
	return nil
}

func (s *Service) validateCreate(ctx context.Context, p *CreateParams) (string, error) {
	var errs invalid.Errors
	if p.ID == "" {
		p.ID = store.NewID()
		audit.Describe(ctx, "service_type_instance:"+p.ID, nil)
	} else if !p.Resume && !resourceid.Valid(p.ID) {
		// A client's id follows AEP-122; a resumed create's is a resource's
		// the server recorded already (maybe before the rule).
		errs.Add("id", "%s", resourceid.Message)
	}
	if p.ProviderName == "" {
		errs.Add("provider_name", "is required")
	}
	if p.Spec == nil {
		errs.Add("spec", "is required")
		return "", errs.Err()
	}
	serviceType, _ := p.Spec["service_type"].(string)
	if serviceType == "" {
		errs.Add("spec.service_type", "is required and must name a service type")
	}
	if err := errs.Err(); err != nil {
		return "", err
	}
	err := s.cfg.Specs.ValidateSpec(ctx, serviceType, p.Spec)
	var bad *invalid.Error
	if err != nil && !errors.As(err, &bad) {
		// The validator's only other answer is an unknown service type.
		return "", invalid.New("spec.service_type", "%v", err)
	}
	return serviceType, err
}

// instanceName is spec.metadata.name, the instance's display name.
func instanceName(spec map[string]any) string {
	meta, _ := spec["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name
}

// instance reads one instance; project "" means any (system callers).
func (s *Service) instance(ctx context.Context, project, id string) (Instance, error) {
	return instanceFromRow(s.q.InstanceGet(ctx, s.cfg.DB, id, project))
}
