package processprovider

import (
	"slices"
	"strings"

	"github.com/stewardhq/steward/internal/invalid"
)

// DefaultAllowCommands are the commands a provider runs when it is not told
// which: the dev catalog's. A provider runs what its orders name, as its own
// user, so what it may run is the operator's choice (AllowCommands,
// --allow-command), never the orderer's.
var DefaultAllowCommands = []string{"sleep"}

// AllowAnyCommand, in AllowCommands, allows every command.
const AllowAnyCommand = "*"

// allowed refuses a spec whose command is not in allow. Nothing runs in
// no-op mode, so nothing is refused there.
func allowed(s spec, allow []string, noOp bool) error {
	if noOp || len(s.argv) == 0 || slices.Contains(allow, AllowAnyCommand) || slices.Contains(allow, s.argv[0]) {
		return nil
	}
	return &RequestError{Invalid: invalid.New("spec.process.command[0]",
		"%q is not a command this provider runs (it runs %s: its --allow-command)", s.argv[0], strings.Join(allow, ", "))}
}
