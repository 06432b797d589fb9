package processprovider

import (
	"regexp"
	"strconv"

	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/pkg/provider"
)

// maxMembers bounds spec.members: a process runtime on one host.
const maxMembers = 16

// memberIDPattern keeps a member id usable as a directory name and a DNS
// label: 1 to 32 lowercase letters, digits and inner dashes.
var memberIDPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// memberSpec is one entry of spec.members, validated.
type memberSpec struct {
	id   string
	role string
}

// wireMember is one entry of spec.members as it arrives.
type wireMember struct {
	ID   string `json:"id"`
	Role string `json:"role"`
}

// parseMembers validates spec.members, adding what is wrong to es: 1 to 16
// entries, unique ids of memberIDPattern, roles server or agent, and at
// least one server, since the runtime's health is judged by its servers.
func parseMembers(wire []wireMember, es *invalid.Errors) []memberSpec {
	if len(wire) == 0 || len(wire) > maxMembers {
		es.Add("spec.members", "must list 1 to %d members", maxMembers)
		return nil
	}
	members := make([]memberSpec, 0, len(wire))
	firstIndex := map[string]int{}
	servers, badRoles := 0, false
	for i, w := range wire {
		field := "spec.members[" + strconv.Itoa(i) + "]"
		switch j, dup := firstIndex[w.ID]; {
		case !memberIDPattern.MatchString(w.ID):
			es.Add(field+".id", "must be 1 to 32 lowercase letters, digits or '-', starting and ending with a letter or digit")
		case dup:
			es.Add(field+".id", "duplicates spec.members[%d].id %q", j, w.ID)
		default:
			firstIndex[w.ID] = i
		}
		switch w.Role {
		case provider.MemberRoleServer:
			servers++
		case provider.MemberRoleAgent:
		default:
			es.Add(field+".role", "must be server or agent")
			badRoles = true
		}
		members = append(members, memberSpec{id: w.ID, role: w.Role})
	}
	if servers == 0 && !badRoles {
		es.Add("spec.members", "must include at least one server")
	}
	return members
}
