package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/internal/providerhost"
)

// providerFlags are the flags every `steward provider …` command takes,
// defined once so that they mean the same in each: the provider's name
// and API address, Steward's URLs and the bearer token, the logs, and
// --label for the providers that register labels. They fill in the
// providerhost.Settings the command's daemons run with.
type providerFlags struct {
	settings *providerhost.Settings
	token    machineToken
	logs     logFlags
	// labels are --label's key=value pairs, read by parseLabels.
	labels []string
}

// newProviderFlags registers the flags on cmd, into settings, with the
// provider's own defaults for --name and --listen.
func newProviderFlags(cmd *cobra.Command, settings *providerhost.Settings, name, listen string) *providerFlags {
	p := &providerFlags{settings: settings}
	f := cmd.Flags()
	registerStewardURLs(cmd, "steward-url", &settings.StewardURLs)
	f.StringVar(&settings.Name, "name", name, "name to register under")
	f.StringVar(&settings.Listen, "listen", listen, "address of the provider API")
	p.logs.register(f)
	p.token.register(cmd, "bearer token for Steward, empty for a --dev server")
	return p
}

// registerLabels adds --label.
func (p *providerFlags) registerLabels(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&p.labels, "label", nil, "metadata to register, key=value; repeatable")
}

// resolveToken reads the bearer token (--token-file or --token) into the
// settings.
func (p *providerFlags) resolveToken() error {
	token, err := p.token.resolve()
	p.settings.Token = token
	return err
}

// parseLabels reads --label into the settings.
func (p *providerFlags) parseLabels() error {
	labels, err := parseLabels(p.labels)
	p.settings.Labels = labels
	return err
}

// parseLabels reads key=value pairs.
func parseLabels(pairs []string) (map[string]string, error) {
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, errors.New("--label " + p + ": want key=value")
		}
		out[k] = v
	}
	return out, nil
}

// backendsFlag is the flag of a provider that may serve several backends
// (clusters, servers), one a spec of key=value pairs: each registers as a
// provider of its own, and the specs stand in for the flags that name a
// single backend.
type backendsFlag struct {
	// name is the flag's ("cluster"); backend says what a spec names
	// ("server").
	name, backend string
	// keys are a spec's keys, in the order an unknown key's error lists
	// them. name, listen and label fill in the settings; the others are
	// the provider's own.
	keys []string
	// singles are the flags a spec stands in for, refused beside it.
	singles []string
	// specs are the flag's values.
	specs []string
}

// register adds the flag, repeatable.
func (b *backendsFlag) register(cmd *cobra.Command, usage string) {
	cmd.Flags().StringArrayVar(&b.specs, b.name, nil, usage)
}

// refuseSingles says which flag naming a single backend is given beside
// the specs, if one is.
func (b *backendsFlag) refuseSingles(cmd *cobra.Command) error {
	for _, single := range b.singles {
		if cmd.Flags().Changed(single) {
			return fmt.Errorf("--%[1]s and --%[2]s both name a %[3]s: give each %[3]s as a --%[2]s", single, b.name, b.backend)
		}
	}
	return nil
}

// parse reads one spec into the settings of its backend: base's, on a free
// port and without labels unless the spec gives them. own gets each of the
// provider's own keys; shown is the spec as errors show it (without a
// secret).
func (b *backendsFlag) parse(spec, shown string, base providerhost.Settings, own func(key, value string)) (providerhost.Settings, error) {
	s := base
	s.Name, s.Listen, s.Labels = "", "127.0.0.1:0", map[string]string{}
	for part := range strings.SplitSeq(spec, ",") {
		k, v, ok := strings.Cut(part, "=")
		switch {
		case !ok || v == "":
			return s, fmt.Errorf("--%s %q: %q is not key=value", b.name, shown, part)
		case k == "name":
			s.Name = v
		case k == "listen":
			s.Listen = v
		case k == "label":
			lk, lv, ok := strings.Cut(v, "=")
			if !ok || lk == "" {
				return s, fmt.Errorf("--%s %q: label %q: want label=key=value", b.name, shown, v)
			}
			s.Labels[lk] = lv
		case slices.Contains(b.keys, k):
			own(k, v)
		default:
			return s, fmt.Errorf("--%s %q: unknown key %q (%s)", b.name, shown, k, strings.Join(b.keys, ", "))
		}
	}
	return s, nil
}
