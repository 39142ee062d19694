package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/importer"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/atomicfile"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/report"
)

// importCommand is `mcpc import`: another client's MCP configuration
// converted for a profile, the output on stdout (or -o FILE) and the report
// of every change on stderr.
func importCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "import",
		Usage: "convert a Claude Desktop, VS Code, Cursor or Claude Code MCP configuration for volcanic or craftbot, reporting every change",
		UsageText: `mcpc import --from ` + strings.Join(importer.Clients, "|") + ` FILE --to volcanic|craftbot [--form settings|appsettings] [-o FILE] [--format text|json|sarif|github]

Every server that converts is written; one that cannot be is reported, and the run exits 1.

Examples:
   mcpc import --from claude-desktop claude_desktop_config.json --to volcanic -o ~/.volcanic/agent/settings.json
   mcpc import --from vscode .vscode/mcp.json --to volcanic --form appsettings > appsettings.Mcp.json
   mcpc import --from claude-code .mcp.json --to craftbot -o app/config/mcp_config.json`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "from", Usage: "the client that wrote FILE: " + strings.Join(importer.Clients, "|")},
			&ucli.StringFlag{Name: "to", Usage: "the profile to write for: " + strings.Join(importer.Targets, "|")},
			&ucli.StringFlag{Name: "form", Value: importer.FormSettings, Usage: "volcanic output: settings (the agent's settings.json, mcpServers) or appsettings (a host file's Mcp:Servers)"},
			&ucli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the converted configuration to `FILE` instead of standard output"},
			&ucli.StringFlag{Name: "format", Value: "text", Usage: "report format (on standard error): " + strings.Join(report.Formats, "|")},
			&ucli.BoolFlag{Name: "oneline", Usage: "text format: one line per change, without the source excerpt"},
		},
		Action: importAction,
	}
}

func importAction(c *ucli.Context) error {
	if c.NArg() != 1 {
		return &exitError{code: ExitUsage, msg: "import takes one FILE, the client's configuration (see mcpc import --help)"}
	}
	for _, f := range []string{"from", "to"} {
		if c.String(f) == "" {
			return &exitError{code: ExitUsage, msg: fmt.Sprintf("import needs --%s (see mcpc import --help)", f)}
		}
	}
	file := c.Args().First()
	data, err := inputfile.ReadText(file)
	if err != nil {
		return &exitError{code: ExitUsage, msg: fmt.Sprintf("cannot read %s: %v", file, unwrapImportPath(err))}
	}
	opts := importer.Options{From: c.String("from"), To: c.String("to"), Form: c.String("form")}
	res, err := importer.Import(file, data, opts)
	if err != nil {
		return &exitError{code: ExitUsage, msg: err.Error()}
	}
	p, err := report.New(c.String("format"), report.Options{Sources: res.Excerpts(file, data), OneLine: c.Bool("oneline"),
		ToolVersion: Version, Redact: res.Redact, Rules: importer.Lookup, Color: useColor(c, c.App.ErrWriter)})
	if err != nil {
		return &exitError{code: ExitUsage, msg: "--format: " + err.Error()}
	}
	if err := p.Print(c.App.ErrWriter, res.Diagnostics); err != nil {
		return &exitError{code: ExitInternal, msg: err.Error()}
	}
	if res.Output == nil {
		fmt.Fprintf(c.App.ErrWriter, "nothing written: %s\n", report.Summary(res.Diagnostics))
		return &exitError{code: ExitProblems}
	}
	if err := validateImported(res, opts.To, opts.Form); err != nil {
		return &exitError{code: ExitInternal, msg: err.Error()}
	}
	if out := c.String("output"); out != "" {
		if err := atomicfile.Replace(out, res.Output, 0o600, nil); err != nil {
			return &exitError{code: ExitUsage, msg: err.Error()}
		}
	} else if _, err := c.App.Writer.Write(res.Output); err != nil {
		return &exitError{code: ExitInternal, msg: err.Error()}
	}
	fmt.Fprintf(c.App.ErrWriter, "%s imported%s%s: %s\n", importPlural(res.Converted, "server"), remoteNote(res.Remote), failedNote(res.Failed), report.Summary(res.Diagnostics))
	if res.HasErrors() {
		// What converts is written; the servers left out fail the run, so
		// that a CI migration notices them.
		return &exitError{code: ExitProblems}
	}
	return nil
}

func failedNote(n int) string {
	if n == 0 {
		return ""
	}
	return ", " + importPlural(n, "server") + " not imported (see the errors)"
}

func remoteNote(n int) string {
	if n == 0 {
		return ""
	}
	return ", " + importPlural(n, "remote server") + " to add with mcpc remote add"
}

func importPlural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// importedName is the path under which the compiler reads the converted
// configuration; nothing is written there.
const importedName = "<import output>"

// validateImported compiles the output as `mcpc validate` would (in
// memory): an error there is a defect of the converter, not of the user's
// file.
func validateImported(res *importer.Result, to, form string) error {
	agentDir := filepath.Join(importedName, "agent")
	opts := compile.Options{CleanEnv: true, AgentDir: agentDir, HomeDir: importedName}
	settings := filepath.Join(agentDir, "settings.json")
	switch {
	case to == importer.Craftbot:
		opts = compile.Options{Profile: plan.ProfileCraftbot, CleanEnv: true, Config: importedName, TargetOS: "linux"}
		settings = importedName
	case form == importer.FormAppSettings:
		opts.AppSettings = []string{importedName}
		settings = importedName
	}
	opts.ReadFile = func(path string) ([]byte, error) {
		if path == settings {
			return res.Output, nil
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	cres, err := compile.Compile(opts)
	if err != nil {
		return fmt.Errorf("checking the converted configuration: %v", err)
	}
	for _, d := range cres.Diagnostics {
		if d.Severity == diag.Error {
			return fmt.Errorf("internal error: the converted configuration does not pass mcpc validate (%s at line %d: %s); please report it",
				d.Rule, d.Line, res.Redact(d.Message))
		}
	}
	return nil
}

func unwrapImportPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
