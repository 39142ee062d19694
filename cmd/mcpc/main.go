// Command mcpc compiles, validates and lints the MCP-server configuration of
// agent hosts. All logic lives in packages; see cmd/mcpc/cli.
//
// It imports only cmd/mcpc/cli.
package main

import (
	"os"

	"github.com/mcpc-dev/mcpc/cmd/mcpc/cli"
)

func main() {
	os.Exit(cli.Run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
