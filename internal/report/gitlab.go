package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strconv"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// gitlabPrinter prints GitLab's Code Quality report: a JSON array with one
// issue per finding. Severities map as error → major, warning → minor,
// info → info; a failed run (Run.Failure) is one critical issue. The path
// is relative to Options.Root (GitLab links it into the repository); a
// finding without a file names the root, ".". The fingerprint, which GitLab
// compares between branches, hashes the rule, path and message and the
// finding's rank among equal ones, not its line: a finding keeps its
// fingerprint when lines above it move.
type gitlabPrinter struct{ opts Options }

type gitlabIssue struct {
	Description string         `json:"description"`
	CheckName   string         `json:"check_name"`
	Fingerprint string         `json:"fingerprint"`
	Severity    string         `json:"severity"`
	Location    gitlabLocation `json:"location"`
}

type gitlabLocation struct {
	Path  string      `json:"path"`
	Lines gitlabLines `json:"lines"`
}

type gitlabLines struct {
	Begin int `json:"begin"`
}

func (p gitlabPrinter) printRun(w io.Writer, r Run) error {
	out := make([]gitlabIssue, 0, len(r.Diagnostics)+1)
	seen := map[[3]string]int{}
	add := func(check, path, msg, severity string, line int) {
		key := [3]string{check, path, msg}
		n := seen[key]
		seen[key]++
		h := sha256.New()
		for _, part := range []string{check, path, msg, strconv.Itoa(n)} {
			h.Write([]byte(part))
			h.Write([]byte{0})
		}
		if line < 1 {
			line = 1 // lines.begin counts from 1
		}
		out = append(out, gitlabIssue{Description: msg, CheckName: check, Fingerprint: hex.EncodeToString(h.Sum(nil)[:16]),
			Severity: severity, Location: gitlabLocation{Path: path, Lines: gitlabLines{Begin: line}}})
	}
	for _, d := range sorted(r.Diagnostics) {
		path := "."
		if d.File != "" {
			path, _ = relPath(p.opts.Root, d.File)
		}
		msg := d.Message
		if d.Suggestion != "" {
			msg += "\nsuggestion: " + d.Suggestion
		}
		check := d.Rule
		if check == "" {
			check = toolName
		}
		add(check, path, msg, gitlabSeverity(d.Severity), d.Line)
	}
	if r.Failure != "" {
		add(toolName, ".", r.Failure, "critical", 1)
	}
	var buf bytes.Buffer
	if err := encodeJSON(&buf, out); err != nil {
		return err
	}
	return flush(w, &buf)
}

func gitlabSeverity(s diag.Severity) string {
	switch s {
	case diag.Error:
		return "major"
	case diag.Warning:
		return "minor"
	}
	return "info"
}
