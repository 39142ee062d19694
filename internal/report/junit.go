package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// junitPrinter prints JUnit XML, as GitLab, Jenkins and Azure read test
// reports: one testsuite per file, one testcase per rule that fired in it
// (named by the rule id, its classname the file), so a test keeps its name
// when lines move and a CI's test history follows a finding until it is
// fixed. The testcase's text lists each finding of the rule in the file. It
// fails on an error (on a warning too with Options.Strict); a case of
// warnings or info passes with its findings as system-out. A clean run is
// one passing testcase (a report without tests fails Jenkins' junit step);
// a failed run (Run.Failure) is a testcase with an error.
type junitPrinter struct{ opts Options }

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junitNoFile names the suite of findings that have no file, and of a
// clean or failed run.
const junitNoFile = toolName

func (p junitPrinter) printRun(w io.Writer, r Run) error {
	var suites []junitSuite
	suiteOf := map[string]int{}
	caseOf := map[[2]string]int{}
	worst := map[[2]string]diag.Severity{}
	for _, d := range sorted(r.Diagnostics) {
		file := junitNoFile
		if d.File != "" {
			file, _ = relPath(p.opts.Root, d.File)
		}
		si, ok := suiteOf[file]
		if !ok {
			si = len(suites)
			suiteOf[file] = si
			suites = append(suites, junitSuite{Name: file})
		}
		rule := d.Rule
		if rule == "" {
			rule = toolName
		}
		key := [2]string{file, rule}
		ci, ok := caseOf[key]
		if !ok {
			ci = len(suites[si].Cases)
			caseOf[key] = ci
			suites[si].Cases = append(suites[si].Cases, junitCase{Name: rule, Classname: file})
		}
		c := &suites[si].Cases[ci]
		line := fmt.Sprintf("%d:%d: %s: %s", d.Line, d.Column, d.Severity, d.Message)
		if d.Suggestion != "" {
			line += "\nsuggestion: " + d.Suggestion
		}
		if c.SystemOut != "" {
			c.SystemOut += "\n"
		}
		c.SystemOut += line
		if rank(d.Severity) > rank(worst[key]) {
			worst[key] = d.Severity
		}
		if c.Failure == nil && p.fails(d.Severity) {
			c.Failure = &junitProblem{Message: d.Message, Type: string(d.Severity)}
		}
	}
	for si := range suites {
		for ci := range suites[si].Cases {
			c := &suites[si].Cases[ci]
			if c.Failure != nil {
				c.Failure.Type = string(worst[[2]string{c.Classname, c.Name}])
				c.Failure.Text, c.SystemOut = c.SystemOut, ""
			}
		}
	}
	if r.Failure != "" {
		suites = append(suites, junitSuite{Name: junitNoFile, Cases: []junitCase{{Name: toolName, Classname: junitNoFile,
			Error: &junitProblem{Message: r.Failure, Type: "failed", Text: r.Failure}}}})
	} else if len(suites) == 0 {
		suites = []junitSuite{{Name: junitNoFile, Cases: []junitCase{{Name: "no problems", Classname: junitNoFile}}}}
	}
	doc := junitSuites{Name: toolName, Suites: suites}
	for si := range doc.Suites {
		s := &doc.Suites[si]
		s.Tests = len(s.Cases)
		for _, c := range s.Cases {
			if c.Failure != nil {
				s.Failures++
			}
			if c.Error != nil {
				s.Errors++
			}
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	buf.WriteByte('\n')
	return flush(w, &buf)
}

// fails says whether a finding of severity s fails its test case.
func (p junitPrinter) fails(s diag.Severity) bool {
	return s == diag.Error || p.opts.Strict && s == diag.Warning
}

func rank(s diag.Severity) int {
	switch s {
	case diag.Error:
		return 3
	case diag.Warning:
		return 2
	case "":
		return 0
	}
	return 1 // info, and an unknown severity as diag.Count counts it
}
