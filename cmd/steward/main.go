// Command steward is the Steward control plane: `steward server` serves the
// API; the other subcommands are tools around it. See README.md.
package main

import (
	"os"

	"github.com/stewardhq/steward/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
