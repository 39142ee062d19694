package cli

import (
	"io"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/internal/term"
)

// The values of --color.
const (
	colorAuto   = "auto"   // on a terminal, unless NO_COLOR is set
	colorAlways = "always" // also into a pipe or file, also with NO_COLOR
	colorNever  = "never"
)

func colorFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "color", Value: colorAuto,
		Usage: "color the text diagnostics: auto (on a terminal unless NO_COLOR is set), always, never"}
}

// addColorFlag gives every command that acts a --color flag: any of them
// may print diagnostics, and a flag that some commands refuse would be a
// trap in scripts and aliases.
func addColorFlag(cmds []*ucli.Command) {
	for _, cmd := range cmds {
		if cmd.Action != nil {
			cmd.Flags = append(cmd.Flags, colorFlag())
			before := cmd.Before
			cmd.Before = func(c *ucli.Context) error {
				if err := checkColorFlag(c); err != nil {
					return err
				}
				if before != nil {
					return before(c)
				}
				return nil
			}
		}
		addColorFlag(cmd.Subcommands)
	}
}

// checkColorFlag refuses a --color value other than auto, always, never.
func checkColorFlag(c *ucli.Context) error {
	switch c.String("color") {
	case colorAuto, colorAlways, colorNever, "":
		return nil
	}
	return usageError("--color %q: expected auto, always or never", c.String("color"))
}

// useColor decides whether text for w is colored: --color=always and
// --color=never say so; auto colors a terminal unless the environment sets
// NO_COLOR (https://no-color.org: any non-empty value). Output into a pipe
// or a file is never colored under auto, so it stays byte for byte what a
// script or a golden file expects.
func useColor(c *ucli.Context, w io.Writer) bool {
	switch c.String("color") {
	case colorAlways:
		return true
	case colorNever:
		return false
	}
	if noColor() {
		return false
	}
	if cw, ok := w.(*countingWriter); ok {
		w = cw.w
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f)
}

func noColor() bool {
	for _, kv := range environ() {
		if v, ok := strings.CutPrefix(kv, "NO_COLOR="); ok && v != "" {
			return true
		}
	}
	return false
}
