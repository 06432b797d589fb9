//go:build tools

// The kwok controller is built from its own package
// (go build sigs.k8s.io/kwok/cmd/kwok, in scripts/kube-throwaway); this
// import keeps it in go.mod.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
