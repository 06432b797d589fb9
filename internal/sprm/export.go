package sprm

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stewardhq/steward/pkg/provider"
)

// ErrExportNotSupported is returned by BeginExport for an instance whose
// provider did not register the export operation.
var ErrExportNotSupported = errors.New("sprm: the provider does not export")

// ExportsData reports whether a rehydration from an instance on provider
// from to one on provider to carries the data: both registered the export
// operation (the one hands it out, the other reads it).
func (s *Service) ExportsData(ctx context.Context, from, to string) (bool, error) {
	for _, name := range []string{from, to} {
		prov, err := s.Provider(ctx, name)
		if err != nil {
			return false, err
		}
		if !slices.Contains(prov.Operations, provider.OperationExport) {
			return false, nil
		}
	}
	return true, nil
}

// BeginExport asks an instance's provider to stop writes to it and grant
// its export, and returns the source a create of its replacement carries.
// The source's token is a secret that lives only as long as that create
// call: it is never stored.
func (s *Service) BeginExport(ctx context.Context, instanceID string) (provider.ExportSource, error) {
	prov, err := s.exportingProvider(ctx, instanceID)
	if err != nil {
		return provider.ExportSource{}, err
	}
	g, err := s.cfg.Providers.BeginExport(prov.calling(ctx), prov.Endpoint, instanceID)
	if err != nil {
		return provider.ExportSource{}, err
	}
	s.log.InfoContext(ctx, "export begun: the instance takes no more writes", "instance_id", instanceID,
		"provider", prov.Name, "expire_time", g.ExpireTime)
	return provider.ExportSource{Endpoint: prov.Endpoint, InstanceID: instanceID, Token: g.Token}, nil
}

// EndExport asks an instance's provider to let it take writes again (its
// copy failed). An instance its provider no longer holds is done.
func (s *Service) EndExport(ctx context.Context, instanceID string) error {
	prov, err := s.exportingProvider(ctx, instanceID)
	if err != nil {
		return err
	}
	err = s.cfg.Providers.EndExport(prov.calling(ctx), prov.Endpoint, instanceID)
	if err != nil && !errors.Is(err, provider.ErrNotFound) {
		return err
	}
	s.log.InfoContext(ctx, "export ended: the instance takes writes again", "instance_id", instanceID, "provider", prov.Name)
	return nil
}

func (s *Service) exportingProvider(ctx context.Context, instanceID string) (Provider, error) {
	in, err := s.instance(ctx, "", instanceID)
	if err != nil {
		return Provider{}, err
	}
	prov, err := s.Provider(ctx, in.ProviderName)
	if err != nil {
		return Provider{}, err
	}
	if !slices.Contains(prov.Operations, provider.OperationExport) {
		return Provider{}, fmt.Errorf("%w: %q (instance %s)", ErrExportNotSupported, prov.Name, instanceID)
	}
	return prov, nil
}
