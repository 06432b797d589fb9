package sprm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/invalid"
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
	err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		prov, err = scanProvider(tx.QueryRow(ctx, s.q.Get("ProviderLockByName"), p.ProviderName))
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
		_, err = tx.Exec(ctx, s.q.Get("InstanceInsert"), p.ID, p.Project, instanceName(p.Spec), prov.Name, serviceType,
			store.JSON(p.Spec), t, t)
		if errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("%w: %s", ErrInstanceExists, p.ID)
		}
		return err
	})
	if err != nil {
		s.metrics.creates.WithLabelValues("rejected").Inc()
		return Instance{}, err
	}

	got, err := s.cfg.Providers.Create(ctx, prov.Endpoint, provider.CreateRequest{
		InstanceID: p.ID, ServiceType: serviceType, Spec: p.Spec, Metadata: p.Metadata,
	})
	// From here the caller's ctx may be gone; the outcome must still be written.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err != nil {
		return Instance{}, s.createFailed(wctx, p.ID, prov, serviceType, err)
	}
	status := got.Status
	if !status.Valid() || status == provider.StatusPending {
		status = provider.StatusProvisioning
	}
	if _, err := s.setStatus(wctx, InstanceStatus{InstanceID: p.ID, Status: status, Message: got.Message},
		s.q.Get("InstanceRecordCreated"), string(status), got.Message, s.now(), p.ID); err != nil {
		s.metrics.creates.WithLabelValues("unknown").Inc()
		s.queueUnknown(wctx, p.ID, prov.Name, serviceType, err)
		return Instance{}, &OutcomeUnknownError{InstanceID: p.ID, Kind: ErrRecordFailed, Err: err}
	}
	s.metrics.creates.WithLabelValues("accepted").Inc()
	return s.instance(wctx, "", p.ID)
}

// createFailed handles a provider call that did not succeed: a refusal
// removes the intent; anything else leaves the outcome unknown, so the
// instance is queued for deletion on the provider.
func (s *Service) createFailed(ctx context.Context, id string, prov Provider, serviceType string, err error) error {
	var refused *provider.ResponseError
	if errors.As(err, &refused) {
		s.metrics.creates.WithLabelValues("refused").Inc()
		if _, derr := s.cfg.DB.Exec(ctx, s.q.Get("InstanceDeleteIntent"), id); derr != nil {
			// The sweep will queue it for cleanup; the refusal is still the answer.
			s.log.ErrorContext(ctx, "remove refused intent", "instance_id", id, "error", derr)
		}
		return &ProviderError{Provider: prov.Name, StatusCode: refused.StatusCode, Body: refused.Body}
	}
	s.metrics.creates.WithLabelValues("unknown").Inc()
	kind := ErrProviderUnreachable
	if errors.Is(err, provider.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		kind = ErrProviderTimeout
	}
	s.queueUnknown(ctx, id, prov.Name, serviceType, err)
	return &OutcomeUnknownError{InstanceID: id, Kind: kind, Err: err}
}

// queueUnknown marks an instance whose creation outcome is unknown and queues
// its deletion. If even that fails, the periodic sweep finds the intent.
func (s *Service) queueUnknown(ctx context.Context, id, providerName, serviceType string, cause error) {
	err := s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, s.q.Get("InstanceSetStatus"), string(provider.StatusUnknown),
			"create outcome unknown ("+cause.Error()+"); queued for cleanup", s.now(), id); err != nil {
			return err
		}
		_, err := s.enqueueCleanupTx(ctx, tx, id, providerName, serviceType)
		return err
	})
	if err != nil {
		s.log.ErrorContext(ctx, "queue cleanup of an instance with unknown outcome; the sweep will retry",
			"instance_id", id, "provider", providerName, "error", err)
		return
	}
	s.log.WarnContext(ctx, "create outcome unknown; instance queued for cleanup", "instance_id", id,
		"provider", providerName, "cause", cause)
}

func (s *Service) validateCreate(ctx context.Context, p *CreateParams) (string, error) {
	var errs invalid.Errors
	if p.ID == "" {
		p.ID = uuid.NewString()
	} else if !idPattern.MatchString(p.ID) {
		errs.Add("id", "must match %s", idPattern)
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
	return scanInstance(s.cfg.DB.QueryRow(ctx, s.q.Get("InstanceGet"), id, project, project))
}
