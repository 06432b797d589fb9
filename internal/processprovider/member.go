package processprovider

import (
	"path/filepath"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// implicitMemberID names the one process of an instance without
// spec.members when a repair addresses it: it is that instance's only
// member, a server.
const implicitMemberID = "main"

// member is one supervised process of an instance: an entry of
// spec.members, or the implicit member of an instance without them. A
// member belongs to one spec generation; an update builds new ones.
type member struct {
	id   string
	role string
	// dir is the process's working directory and HOME, with its logs.
	dir string
	// env are the STEWARD_* variables that tell the process who it is.
	env []string

	// The rest is guarded by the instance's mu.

	// pid is the running process's id, 0 when none runs; startTime (see
	// process) and startedAt, when it started by Config.Now, go with it.
	pid       int
	startTime uint64
	startedAt time.Time
	// restarts counts every restart of this member's process, consecutive
	// those since the last run of RestartResetAfter or longer (what
	// spec.max_restarts bounds); lastExit says how the process last ended.
	// They are recorded, so a provider that adopts the member goes on
	// counting.
	restarts    int
	consecutive int
	lastExit    string
	// started says a process of this member has started at least once.
	started bool
	// failed says no process runs and none will be restarted: the
	// restart policy gave up, or a start failed.
	failed  bool
	message string
}

// newMembers builds the members of spec s for instance id, whose directory
// is dir ("" in no-op mode). An instance without spec.members gets one
// implicit member that runs in dir itself with no member variables, as
// before members existed.
func newMembers(id, dir string, s spec) []*member {
	if len(s.members) == 0 {
		return []*member{{id: implicitMemberID, role: provider.MemberRoleServer, dir: dir,
			env: []string{"STEWARD_INSTANCE_ID=" + id}, message: "starting"}}
	}
	members := make([]*member, len(s.members))
	for i, ms := range s.members {
		var mdir string
		if dir != "" {
			mdir = filepath.Join(dir, "members", ms.id)
		}
		members[i] = &member{id: ms.id, role: ms.role, dir: mdir, message: "starting", env: []string{
			"STEWARD_INSTANCE_ID=" + id,
			"STEWARD_MEMBER_ID=" + ms.id,
			"STEWARD_MEMBER_ROLE=" + ms.role,
		}}
	}
	return members
}

// memberView is a copy of a member's state, for a repair to look at
// without holding the instance's lock.
type memberView struct {
	id      string
	role    string
	pid     int
	failed  bool
	message string
}

// view copies m; the caller holds the instance's mu.
func (m *member) view() memberView {
	return memberView{id: m.id, role: m.role, pid: m.pid, failed: m.failed, message: m.message}
}

// health is the member's health as a runtime report states it: a member is
// healthy while its process runs or is being restarted.
func (v memberView) health() string {
	if v.failed {
		return provider.RuntimeFailed
	}
	return provider.RuntimeHealthy
}
