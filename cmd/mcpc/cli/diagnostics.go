package cli

import (
	"io"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/report"
)

// diagOutput is how a command prints diagnostics: a report format and
// whether to leave out the excerpts.
type diagOutput struct {
	format  string
	oneLine bool
	// color is the command's context, for --color; nil prints plain text.
	color *ucli.Context
}

// diagFlags is the output chosen by --format and --oneline, for the
// commands whose --format is the diagnostics format (formatFlags).
func diagFlags(c *ucli.Context) diagOutput {
	return diagOutput{format: c.String("format"), oneLine: c.Bool("oneline"), color: c}
}

// plainText is the output of the commands whose --format is the format of
// their data (tools) or that have none (remote).
func plainText(c *ucli.Context) diagOutput { return diagOutput{format: "text", color: c} }

// printDiagnostics prints ds to w: excerpts from src, and the known secrets
// of redact (which may be nil) taken out of every message.
func printDiagnostics(w io.Writer, out diagOutput, ds []diag.Diagnostic, src diag.Sources, redact func(string) string) error {
	color := out.color != nil && useColor(out.color, w)
	p, err := report.New(out.format, report.Options{Sources: src, OneLine: out.oneLine, ToolVersion: Version, Redact: redact, Color: color})
	if err != nil {
		return usageError("--format: %v", err)
	}
	return p.Print(w, ds)
}

// excerpts is the CLI's one diag.Sources: the lines of files a command read
// itself (a plan, a lock), then those of the libraries it called (the
// compiler's files, servers.json), asked in turn.
type excerpts struct {
	files  map[string]*node.LineIndex
	others []diag.Sources
}

// sourcesOf returns excerpts from others, in that order; nil ones are left out.
func sourcesOf(others ...diag.Sources) *excerpts {
	e := &excerpts{files: map[string]*node.LineIndex{}}
	for _, o := range others {
		if o != nil {
			e.others = append(e.others, o)
		}
	}
	return e
}

// withFile adds the text of a file the command read itself.
func (e *excerpts) withFile(path string, data []byte) *excerpts {
	e.files[path] = node.NewLineIndex(path, data)
	return e
}

func (e *excerpts) Line(file string, line, col int) (string, int, bool) {
	if ix, ok := e.files[file]; ok {
		s, ok := ix.Line(line)
		return s, col, ok
	}
	for _, o := range e.others {
		if text, c, ok := o.Line(file, line, col); ok {
			return text, c, true
		}
	}
	return "", 0, false
}
