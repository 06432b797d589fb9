package repair

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// maxMembers bounds a reported runtime's members.
const maxMembers = 1000

var memberIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// Runtime is the last reported state of an app instance's runtime.
type Runtime struct {
	provider.RuntimeState
	ObservedTime time.Time `json:"observed_time"`
}

// runtime returns the app instance's runtime, nil when none was reported.
func (s *Service) runtime(ctx context.Context, q store.Querier, appInstanceID string) (*Runtime, error) {
	row, err := s.q.RuntimeGet(ctx, q, appInstanceID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read runtime of %s: %w", appInstanceID, err)
	}
	rt := Runtime{ObservedTime: row.ObservedTime}
	if err := json.Unmarshal(row.State, &rt.RuntimeState); err != nil {
		return nil, fmt.Errorf("read runtime of %s: %w", appInstanceID, err)
	}
	return &rt, nil
}

// recordRuntimeTx keeps st as the runtime observed at t, unless a later
// observation is kept already; it reports whether st was kept.
func (s *Service) recordRuntimeTx(ctx context.Context, tx *store.Tx, app order.AppInstance, st provider.RuntimeState,
	observed time.Time) (bool, error) {
	n, err := s.q.RuntimeUpsert(ctx, tx, RuntimeUpsertParams{AppInstanceID: app.ID, Project: app.Project,
		State: store.JSON(st), ObservedTime: observed.UTC(), UpdateTime: s.now()})
	if err != nil {
		return false, fmt.Errorf("record runtime of %s: %w", app.ID, err)
	}
	return n == 1, nil
}

// ReportRuntime applies a provider's report of an app instance's runtime.
// Only the provider the app instance is placed on (or an admin) may report
// it; a report older than the one kept is ErrStaleRuntimeReport.
func (s *Service) ReportRuntime(ctx context.Context, project, appInstanceID string, r provider.RuntimeReport) (View, error) {
	if err := checkRuntime("", r.RuntimeState); err != nil {
		return View{}, err
	}
	if r.ObservedTime.IsZero() {
		return View{}, invalid.New("observed_time", "is required")
	}
	app, err := s.appInstance(ctx, project, appInstanceID)
	if err != nil {
		return View{}, err
	}
	if p, ok := auth.PrincipalFrom(ctx); ok && p.Role != auth.RoleAdmin && p.Provider != app.ProviderName {
		return View{}, fmt.Errorf("%w: %s: app instance %s is placed on %q", auth.ErrPermissionDenied, p, app.ID, app.ProviderName)
	}
	var kept bool
	err = s.cfg.DB.InTx(ctx, func(tx *store.Tx) error {
		kept, err = s.recordRuntimeTx(ctx, tx, app, r.RuntimeState, r.ObservedTime)
		if kept {
			s.changedTx(tx, app.ID)
		}
		return err
	})
	if err != nil {
		return View{}, err
	}
	if !kept {
		return View{}, ErrStaleRuntimeReport
	}
	return s.view(ctx, app)
}

// checkRuntime refuses a runtime state outside the contract; prefix names
// its place in the request ("runtime_state." in a repair report).
func checkRuntime(prefix string, st provider.RuntimeState) error {
	var errs invalid.Errors
	addRuntimeErrors(&errs, prefix, st)
	return errs.Err()
}

// addRuntimeErrors adds st's faults to errs.
func addRuntimeErrors(errs *invalid.Errors, prefix string, st provider.RuntimeState) {
	if !healthValid(st.Health) {
		errs.Add(prefix+"health", "must be one of healthy, degraded, failed")
	}
	if len(st.Members) > maxMembers {
		errs.Add(prefix+"members", "must hold at most %d members", maxMembers)
	}
	seen := make(map[string]bool, len(st.Members))
	for i, m := range st.Members {
		at := prefix + "members[" + strconv.Itoa(i) + "]."
		switch {
		case !memberIDPattern.MatchString(m.ID):
			errs.Add(at+"id", "must match %s", memberIDPattern)
		case seen[m.ID]:
			errs.Add(at+"id", "repeats member %q", m.ID)
		}
		seen[m.ID] = true
		if m.Role != provider.MemberRoleServer && m.Role != provider.MemberRoleAgent {
			errs.Add(at+"role", "must be server or agent")
		}
		if !healthValid(m.Health) {
			errs.Add(at+"health", "must be one of healthy, degraded, failed")
		}
	}
}

func healthValid(h string) bool {
	return h == provider.RuntimeHealthy || h == provider.RuntimeDegraded || h == provider.RuntimeFailed
}

// RuntimeHealth returns the app instance's runtime as last reported: its
// health, a message naming each member that is not healthy, and when it was
// observed; ok is false when no runtime was reported.
func (s *Service) RuntimeHealth(ctx context.Context, appInstanceID string) (health, message string, observed time.Time,
	ok bool, err error) {
	rt, err := s.runtime(ctx, s.cfg.DB, appInstanceID)
	if err != nil || rt == nil {
		return "", "", time.Time{}, false, err
	}
	return rt.Health, healthMessage(rt.RuntimeState), rt.ObservedTime, true, nil
}

// healthMessage says which members of a runtime are not healthy, and how
// many are: "member agent-0 (agent) failed: killed; 1 of 2 members healthy".
func healthMessage(st provider.RuntimeState) string {
	var parts []string
	healthy := 0
	for _, m := range st.Members {
		if m.Health == provider.RuntimeHealthy {
			healthy++
			continue
		}
		p := fmt.Sprintf("member %s (%s) %s", m.ID, m.Role, m.Health)
		if m.Message != "" {
			p += ": " + m.Message
		}
		parts = append(parts, p)
	}
	if len(st.Members) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d members healthy", healthy, len(st.Members)))
	}
	if st.RepairAvailable != nil && !*st.RepairAvailable && st.Health != provider.RuntimeHealthy {
		parts = append(parts, "no repair can help: replace the instance")
	}
	return strings.Join(parts, "; ")
}
