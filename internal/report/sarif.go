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
	sarifSchema    = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion   = "2.1.0"
	toolName       = "mcpc"
	toolInfoURI    = "https://github.com/mcpc-dev/mcpc"
	sarifColumnKnd = "unicodeCodePoints" // diag columns count Unicode characters
)

// sarifPrinter prints a SARIF 2.1.0 log with one run. The driver lists one
// rule per rule id that occurs, sorted by id; results refer to it by id and
// index.
type sarifPrinter struct{ opts Options }

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool       sarifTool     `json:"tool"`
	ColumnKind string        `json:"columnKind"`
	Results    []sarifResult `json:"results"`
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
	DefaultConfiguration *sarifConfiguration `json:"defaultConfiguration,omitempty"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId,omitempty"`
	RuleIndex *int            `json:"ruleIndex,omitempty"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifArtifactLocation struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

func (p sarifPrinter) Print(w io.Writer, ds []diag.Diagnostic) error {
	ds = sorted(ds)

	// One rule entry per rule id that occurs, sorted by id.
	var ids []string
	seen := map[string]bool{}
	for _, d := range ds {
		if d.Rule != "" && !seen[d.Rule] {
			seen[d.Rule] = true
			ids = append(ids, d.Rule)
		}
	}
	sort.Strings(ids)
	index := make(map[string]int, len(ids))
	ruleEntries := make([]sarifRule, 0, len(ids))
	for i, id := range ids {
		index[id] = i
		entry := sarifRule{ID: id, ShortDescription: sarifText{Text: id}}
		if r, ok := p.opts.Rules(id); ok {
			if r.Description != "" {
				entry.ShortDescription.Text = r.Description
			}
			if r.Severity != "" {
				entry.DefaultConfiguration = &sarifConfiguration{Level: sarifLevel(r.Severity)}
			}
		}
		ruleEntries = append(ruleEntries, entry)
	}

	results := make([]sarifResult, 0, len(ds))
	for _, d := range ds {
		res := sarifResult{Level: sarifLevel(d.Severity), Message: sarifText{Text: d.Message}}
		if d.Suggestion != "" {
			res.Message.Text += "\nsuggestion: " + d.Suggestion
		}
		if d.Rule != "" {
			i := index[d.Rule]
			res.RuleID, res.RuleIndex = d.Rule, &i
		}
		if d.File != "" {
			loc := sarifPhysicalLocation{ArtifactLocation: sarifArtifactLocation{URI: artifactURI(d.File)}}
			if d.Line > 0 {
				loc.Region = &sarifRegion{StartLine: d.Line}
				if d.Column > 0 {
					loc.Region.StartColumn = d.Column
				}
			}
			res.Locations = []sarifLocation{{PhysicalLocation: loc}}
		}
		results = append(results, res)
	}

	log := sarifLog{
		Schema:  sarifSchema,
		Version: sarifVersion,
		Runs: []sarifRun{{
			Tool: sarifTool{Driver: sarifDriver{
				Name:           toolName,
				InformationURI: toolInfoURI,
				Version:        p.opts.ToolVersion,
				Rules:          ruleEntries,
			}},
			ColumnKind: sarifColumnKnd,
			Results:    results,
		}},
	}
	var buf bytes.Buffer
	if err := encodeJSON(&buf, log); err != nil {
		return err
	}
	return flush(w, &buf)
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
