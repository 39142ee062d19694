package report

import (
	"bytes"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

const (
	sarifSchema    = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	sarifVersion   = "2.1.0"
	toolName       = "mcpc"
	toolInfoURI    = "https://github.com/mcpc-dev/mcpc"
	sarifColumnKnd = "unicodeCodePoints" // diag columns count Unicode characters
)

// sarifPrinter prints a SARIF 2.1.0 log with one run and one invocation.
// The driver lists one rule per rule id that occurs, sorted by id, with its
// help and the address of its documentation; results refer to it by id and
// index. A finding an ignore dropped is a result with an external
// suppression whose justification is the ignore's reason. With
// Options.Root, paths below it are relative to %SRCROOT%, the root given in
// originalUriBaseIds.
type sarifPrinter struct{ opts Options }

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                        `json:"tool"`
	Invocations        []sarifInvocation                `json:"invocations"`
	OriginalURIBaseIDs map[string]sarifArtifactLocation `json:"originalUriBaseIds,omitempty"`
	ColumnKind         string                           `json:"columnKind"`
	Results            []sarifResult                    `json:"results"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level   string    `json:"level"`
	Message sarifText `json:"message"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri,omitempty"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string              `json:"id"`
	ShortDescription     sarifText           `json:"shortDescription"`
	Help                 *sarifHelp          `json:"help,omitempty"`
	HelpURI              string              `json:"helpUri,omitempty"`
	DefaultConfiguration *sarifConfiguration `json:"defaultConfiguration,omitempty"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID       string             `json:"ruleId,omitempty"`
	RuleIndex    *int               `json:"ruleIndex,omitempty"`
	Level        string             `json:"level"`
	Message      sarifText          `json:"message"`
	Locations    []sarifLocation    `json:"locations,omitempty"`
	Suppressions []sarifSuppression `json:"suppressions,omitempty"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// srcRoot names the repository root in originalUriBaseIds.
const srcRoot = "%SRCROOT%"

func (p sarifPrinter) printRun(w io.Writer, r Run) error {
	ds := sorted(r.Diagnostics)
	sup := sortedSuppressed(r.Suppressed)

	// One rule entry per rule id that occurs, sorted by id.
	var ids []string
	seen := map[string]bool{}
	note := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, d := range ds {
		note(d.Rule)
	}
	for _, s := range sup {
		note(s.Diagnostic.Rule)
	}
	sort.Strings(ids)
	index := make(map[string]int, len(ids))
	ruleEntries := make([]sarifRule, 0, len(ids))
	for i, id := range ids {
		index[id] = i
		ruleEntries = append(ruleEntries, p.rule(id))
	}

	results := make([]sarifResult, 0, len(ds)+len(sup))
	for _, d := range ds {
		results = append(results, p.result(d, index))
	}
	for _, s := range sup {
		res := p.result(s.Diagnostic, index)
		res.Suppressions = []sarifSuppression{{Kind: "external", Justification: s.Reason}}
		results = append(results, res)
	}

	inv := sarifInvocation{ExecutionSuccessful: r.Failure == ""}
	if r.Failure != "" {
		inv.ToolExecutionNotifications = []sarifNotification{{Level: "error", Message: sarifText{Text: r.Failure}}}
	}
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name:           toolName,
			InformationURI: toolInfoURI,
			Version:        p.opts.ToolVersion,
			Rules:          ruleEntries,
		}},
		Invocations: []sarifInvocation{inv},
		ColumnKind:  sarifColumnKnd,
		Results:     results,
	}
	if p.opts.Root != "" {
		root := artifactURI(p.opts.Root)
		if !strings.HasSuffix(root, "/") {
			root += "/" // a base URI ends with a slash (SARIF 3.14.14)
		}
		run.OriginalURIBaseIDs = map[string]sarifArtifactLocation{srcRoot: {URI: root}}
	}
	log := sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}}
	var buf bytes.Buffer
	if err := encodeJSON(&buf, log); err != nil {
		return err
	}
	return flush(w, &buf)
}

// rule is the driver's entry for rule id: its description, help (the
// description and example of docs/rules.md) and documentation address.
func (p sarifPrinter) rule(id string) sarifRule {
	entry := sarifRule{ID: id, ShortDescription: sarifText{Text: id}, HelpURI: p.opts.HelpURI(id)}
	r, ok := p.opts.Rules(id)
	if !ok {
		return entry
	}
	if r.Description != "" {
		entry.ShortDescription.Text = r.Description
		entry.Help = &sarifHelp{Text: r.Description, Markdown: r.Description}
		if r.Example != "" {
			entry.Help.Text += "\n\nExample:\n" + r.Example
			entry.Help.Markdown += "\n\nExample:\n\n```\n" + r.Example + "\n```"
		}
	}
	if r.Severity != "" {
		entry.DefaultConfiguration = &sarifConfiguration{Level: sarifLevel(r.Severity)}
	}
	return entry
}

func (p sarifPrinter) result(d diag.Diagnostic, index map[string]int) sarifResult {
	res := sarifResult{Level: sarifLevel(d.Severity), Message: sarifText{Text: d.Message}}
	if d.Suggestion != "" {
		res.Message.Text += "\nsuggestion: " + d.Suggestion
	}
	if d.Rule != "" {
		i := index[d.Rule]
		res.RuleID, res.RuleIndex = d.Rule, &i
	}
	if d.File != "" {
		art := sarifArtifactLocation{URI: artifactURI(d.File)}
		if rel, ok := relPath(p.opts.Root, d.File); ok {
			art = sarifArtifactLocation{URI: artifactURI(rel), URIBaseID: srcRoot}
		}
		loc := sarifPhysicalLocation{ArtifactLocation: art}
		if d.Line > 0 {
			loc.Region = &sarifRegion{StartLine: d.Line}
			if d.Column > 0 {
				loc.Region.StartColumn = d.Column
			}
		}
		res.Locations = []sarifLocation{{PhysicalLocation: loc}}
	}
	return res
}

func sarifLevel(s diag.Severity) string {
	switch s {
	case diag.Error:
		return "error"
	case diag.Warning:
		return "warning"
	}
	return "note"
}

// artifactURI turns a file path into a SARIF artifact URI: forward slashes,
// percent-encoded, relative paths kept relative and absolute ones (including
// Windows drive paths) as file URIs.
func artifactURI(path string) string {
	p := strings.ReplaceAll(path, `\`, "/")
	if len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]) && (len(p) == 2 || p[2] == '/') {
		p = "/" + p // C:/x -> file:///C:/x
	}
	if strings.HasPrefix(p, "/") {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	// url.URL.String prefixes "./" when the first segment holds a colon, so
	// that it is not read as a scheme.
	return (&url.URL{Path: p}).String()
}

func isASCIILetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }
