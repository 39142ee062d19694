package cli

import (
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/schema"
)

func schemaCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "schema",
		Usage: "print the JSON Schema (or the CUE source) of an input file, for editors",
		UsageText: `mcpc schema KIND [--format jsonschema|cue]

KIND is one of ` + schemaKindList() + `
(the file name works too: settings.json, servers.json, mcp_config.json, appsettings.json, mcpc.cue).
The same schemas are committed under schema/json/ of the repository.

Example:
   mcpc schema settings > settings.schema.json`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "format", Value: "jsonschema", Usage: "jsonschema|cue"},
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return usageError("schema takes one KIND: %s", schemaKindList())
			}
			kind := c.Args().First()
			if _, ok := schema.LookupFileKind(kind); !ok {
				return usageError("unknown schema kind %q: use one of %s", kind, schemaKindList())
			}
			var out string
			switch c.String("format") {
			case "jsonschema":
				data, err := schema.JSONSchema(kind)
				if err != nil {
					return &exitError{code: ExitInternal, msg: err.Error()}
				}
				out = string(data)
			case "cue":
				src, err := schema.CUESource(kind)
				if err != nil {
					return &exitError{code: ExitInternal, msg: err.Error()}
				}
				out = src
			default:
				return usageError("--format %q: schema prints jsonschema or cue", c.String("format"))
			}
			_, err := fmt.Fprint(c.App.Writer, out)
			return err
		},
	}
}

func schemaKindList() string {
	var names []string
	for _, k := range schema.FileKinds() {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}
