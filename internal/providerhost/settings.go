package providerhost

import (
	"maps"

	"github.com/stewardhq/steward/pkg/provider"
)

// Settings are what a provider process is told about itself and about
// Steward. They are the same for every provider Steward ships, and come
// from the same flags of `steward provider …`.
type Settings struct {
	// Name is the provider's registered name.
	Name string
	// Listen is the provider API's address. Defaults to 127.0.0.1:0 (a
	// free port); the registration carries the real one.
	Listen string
	// StewardURLs are Steward's base URLs (its replicas), tried in turn.
	StewardURLs []string
	// Token authenticates to Steward; empty for a --dev server.
	Token string
	// Labels are registered as the provider's metadata (region=eu).
	Labels map[string]string
}

// Registrar registers reg (its service types and operations) under the
// settings' name, with their labels as its metadata.
func (s Settings) Registrar(reg provider.Registration) provider.RegistrarConfig {
	reg.Name, reg.Metadata = s.Name, maps.Clone(s.Labels)
	return provider.RegistrarConfig{StewardURLs: s.StewardURLs, Token: s.Token, Registration: reg}
}

// Reporter sends the provider's reports to the Steward it registers with.
func (s Settings) Reporter() *provider.HTTPReporter {
	return &provider.HTTPReporter{StewardURLs: s.StewardURLs, Token: s.Token}
}
