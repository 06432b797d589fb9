package policy

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/stewardhq/steward/internal/background"
	"github.com/stewardhq/steward/internal/store"
)

// providerSource lists the registered providers with their live instance
// counts (the SPRM's registry, adapted in internal/server).
type providerSource interface {
	AvailableProviders(ctx context.Context) ([]ProviderInfo, error)
}

// Config configures the Service. DB and Providers are required.
type Config struct {
	DB *store.DB
	// Providers lists the providers evaluateRequest offers the policies
	// and picks from. [ProviderSourceFunc] adapts a function.
	Providers providerSource
	// Logger receives the service's logs. Defaults to discarding them.
	Logger *slog.Logger
	// Now reads the clock. Defaults to time.Now.
	Now func() time.Time
	// RefreshInterval is how often the loop started by Start checks whether
	// another replica changed the policies. Defaults to 2s.
	RefreshInterval time.Duration
	// EvaluationTimeout bounds one run of the whole chain. Defaults to 5s.
	EvaluationTimeout time.Duration
}

// Service stores policies and evaluates the chain. Build it with [New]. It
// is safe for concurrent use: evaluations read an immutable compiled set,
// which changes swap atomically.
type Service struct {
	cfg Config
	log *slog.Logger
	q   *queries

	// current is the compiled set in force; nil until the first load.
	current atomic.Pointer[snapshot]
	// schemas caches the constraint schemas policies answer.
	schemas *schemaCache

	// refresh is the refresh loop.
	refresh background.Loop
}

// New returns a Service. It evaluates nothing until Start or Load.
func New(cfg Config) *Service {
	if cfg.DB == nil || cfg.Providers == nil {
		panic("policy: Config.DB and Config.Providers are required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.RefreshInterval = cmp.Or(cfg.RefreshInterval, 2*time.Second)
	cfg.EvaluationTimeout = cmp.Or(cfg.EvaluationTimeout, 5*time.Second)
	return &Service{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "policy"),
		q:       newQueries(cfg.DB.Engine()),
		schemas: newSchemaCache(),
	}
}

// Start loads and compiles the stored policies, then refreshes them every
// RefreshInterval until Stop, so a change made on another replica is in
// force here within that interval. It fails, starting nothing, when a
// stored policy does not compile. Call it once.
func (s *Service) Start(ctx context.Context) error {
	if err := s.Load(ctx); err != nil {
		return err
	}
	if err := s.refresh.Start(ctx, s.refreshLoop); err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	return nil
}

// Stop ends the refresh loop and waits for it. It is idempotent and safe
// before Start.
func (s *Service) Stop(ctx context.Context) error { return s.refresh.Stop(ctx) }

func (s *Service) refreshLoop(ctx context.Context) {
	tick := time.NewTicker(s.cfg.RefreshInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "policy refresh failed; the previous set stays in force", "error", err)
			}
		}
	}
}

// Load reads and compiles every enabled policy and puts the set in force,
// whatever revision is loaded now. On error the set in force does not change.
func (s *Service) Load(ctx context.Context) error {
	return s.reload(ctx, s.current.Load(), true)
}

// Refresh reloads the policies when another replica changed them since
// they were loaded (the stored revision differs), and does nothing
// otherwise, so it is cheap to call often. On error the set in force does
// not change.
func (s *Service) Refresh(ctx context.Context) error {
	return s.reload(ctx, s.current.Load(), false)
}

func (s *Service) reload(ctx context.Context, cur *snapshot, force bool) error {
	// The revision is read before the rows: rows newer than it only make
	// the next Refresh load again, while the reverse order could label old
	// rows with a new revision and never reload them.
	rev, err := s.revisionGet(ctx)
	if err != nil {
		return err
	}
	if !force && cur != nil && cur.revision == rev {
		return nil
	}
	ps, err := s.policyListEnabled(ctx, s.cfg.DB)
	if err != nil {
		return err
	}
	next, err := buildSnapshot(ctx, rev, ps, cur, nil, "")
	if err != nil {
		return fmt.Errorf("compile the stored policies at revision %d: %w", rev, err)
	}
	// Another load or a local change may have swapped meanwhile; theirs is
	// at least as new, or the next Refresh sees the difference.
	if s.current.CompareAndSwap(cur, next) && (cur == nil || cur.revision != rev) {
		s.log.InfoContext(ctx, "policy set loaded", "revision", rev, "enabled_policies", len(next.chain))
	}
	return nil
}

// install puts a set this replica just committed in force, unless a newer
// one got there first.
func (s *Service) install(next *snapshot) {
	for {
		cur := s.current.Load()
		if cur != nil && cur.revision >= next.revision {
			return
		}
		if s.current.CompareAndSwap(cur, next) {
			return
		}
	}
}

// Revision returns the policy revision in force, -1 before the first load.
func (s *Service) Revision() int64 {
	if cur := s.current.Load(); cur != nil {
		return cur.revision
	}
	return -1
}
