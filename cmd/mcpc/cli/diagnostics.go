package cli

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
	strict  bool
	// color is the command's context, for --color; nil prints plain text.
	color *ucli.Context
}

// diagFlags is the output chosen by --format and --oneline, for the
// commands whose --format is the diagnostics format (formatFlags).
func diagFlags(c *ucli.Context) diagOutput {
	return diagOutput{format: c.String("format"), oneLine: c.Bool("oneline"), strict: c.Bool("strict"), color: c}
}

// plainText is the output of the commands whose --format is the format of
// their data (tools) or that have none (remote).
func plainText(c *ucli.Context) diagOutput { return diagOutput{format: "text", color: c} }

// printDiagnostics prints ds to w: excerpts from src, and the known secrets
// of redact (which may be nil) taken out of every message.
func printDiagnostics(w io.Writer, out diagOutput, ds []diag.Diagnostic, src diag.Sources, redact func(string) string) error {
	return printRun(w, out, report.Run{Diagnostics: ds}, src, redact)
}

// printRun prints a run's report as one document (printDiagnostics).
func printRun(w io.Writer, out diagOutput, r report.Run, src diag.Sources, redact func(string) string) error {
	color := out.color != nil && useColor(out.color, w)
	p, err := report.New(out.format, report.Options{Sources: src, OneLine: out.oneLine, ToolVersion: Version, Redact: redact, Color: color,
		Root: repoRoot(nil), Strict: out.strict})
	if err != nil {
		return usageError("--format: %v", err)
	}
	return p.PrintRun(w, r)
}

// repoRoot is the repository root the document formats name paths from:
// the nearest directory holding .git at or above the inputs (their common
// parent; none given: the current directory), else the current directory.
func repoRoot(inputs []string) string {
	cwd, err := os.Getwd()
	if err != nil {
		return ""
	}
	start := ""
	for _, in := range inputs {
		abs, err := filepath.Abs(in)
		if err != nil {
			continue
		}
		if start == "" {
			start = abs
			continue
		}
		for start != filepath.Dir(start) && !within(start, abs) {
			start = filepath.Dir(start)
		}
	}
	if start == "" {
		start = cwd
	}
	for dir := start; ; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		if dir == filepath.Dir(dir) {
			return cwd
		}
	}
}

// within says whether path is dir or below it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// documentCommands print their diagnostics on standard output in the
// format of --format: a run of theirs that fails in a document format
// still prints a document.
var documentCommands = map[string]bool{"validate": true, "lint": true}

// printFailedRun writes the document of a failed run (exit 2 or 3) to
// stdout when the command prints a document format and wrote nothing: an
// error found before the command's own printing (a bad flag, an unreadable
// input, nothing to check). The format is read from args, as the flags may
// not have parsed.
func printFailedRun(stdout *countingWriter, args []string, msg string) {
	if stdout.n > 0 || len(args) < 2 || !documentCommands[args[1]] {
		return
	}
	format := ""
	for i := 2; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "format" {
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i]
		}
		format = value
	}
	if !slices.Contains(report.Documents, format) {
		return
	}
	if p, err := report.New(format, report.Options{ToolVersion: Version}); err == nil {
		p.PrintRun(stdout, report.Run{Failure: msg})
	}
}

// countingWriter counts what was written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
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
