// Package profiles links every host profile into a program: importing it
// registers each with package compile, so that compile.Compile and
// compile.Lookup know them. A new host design is a package of its own,
// listed here.
package profiles

import (
	_ "github.com/mcpc-dev/mcpc/compile/craftbot"
	_ "github.com/mcpc-dev/mcpc/compile/volcanic"
)
