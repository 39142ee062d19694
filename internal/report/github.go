package report

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/term"
)

// githubPrinter prints GitHub Actions workflow commands, one per line:
//
//	::error file=app.json,line=3,col=5,title=unknown-field::message
//
// Properties that do not apply (line and col for line 0, col for column 0,
// title without a rule) are left out. A suggestion is appended to the
// message on its own line. Control characters other than \r and \n (which
// the workflow commands encode) are shown as escapes, as in the text
// format: the log that shows the commands is read on a terminal or in a
// viewer that acts on ANSI escapes.
type githubPrinter struct{}

func (githubPrinter) printRun(w io.Writer, r Run) error {
	var buf bytes.Buffer
	for _, d := range sorted(r.Diagnostics) {
		buf.WriteString("::")
		buf.WriteString(githubCommand(d.Severity))
		var props []string
		if d.File != "" {
			props = append(props, "file="+escapeProperty(escapeControls(d.File)))
		}
		if d.Line > 0 {
			props = append(props, "line="+strconv.Itoa(d.Line))
			if d.Column > 0 {
				props = append(props, "col="+strconv.Itoa(d.Column))
			}
		}
		if d.Rule != "" {
			props = append(props, "title="+escapeProperty(escapeControls(d.Rule)))
		}
		if len(props) > 0 {
			buf.WriteByte(' ')
			buf.WriteString(strings.Join(props, ","))
		}
		buf.WriteString("::")
		msg := escapeControls(d.Message)
		if d.Suggestion != "" {
			msg += "\nsuggestion: " + escapeControls(d.Suggestion)
		}
		buf.WriteString(escapeData(msg))
		buf.WriteByte('\n')
	}
	return flush(w, &buf)
}

func githubCommand(s diag.Severity) string {
	switch s {
	case diag.Error:
		return "error"
	case diag.Warning:
		return "warning"
	}
	return "notice"
}

// escapeData escapes a workflow command's message as @actions/core does.
var dataEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

// propertyEscaper escapes a workflow command's property value as
// @actions/core does.
var propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }

// escapeControls is term.Escape keeping \r and \n, which escapeData and
// escapeProperty encode as GitHub reads them (a multi-line annotation).
func escapeControls(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(l, "\r")
		for j, p := range parts {
			parts[j] = term.Escape(p)
		}
		lines[i] = strings.Join(parts, "\r")
	}
	return strings.Join(lines, "\n")
}
