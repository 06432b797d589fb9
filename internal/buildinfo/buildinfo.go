// Package buildinfo says which build of steward is running: the version a
// release stamps in with -ldflags, else the module version or VCS revision
// the Go toolchain recorded, else "devel".
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// version is set by a release build:
//
//	go build -ldflags "-X github.com/stewardhq/steward/internal/buildinfo.version=v1.2.3" ./cmd/steward
var version string

var computed = sync.OnceValue(func() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return "devel-" + rev
})

// Version is this binary's version: "v1.2.3", "devel-0123456789ab(-dirty)"
// or "devel".
func Version() string { return computed() }
