// Command tollgate is the tollgate daemon, its CLI and its operator toolkit.
package main

import (
	"os"

	"github.com/tollgatehq/tollgate/cmd"
)

func main() {
	os.Exit(cmd.Main())
}
