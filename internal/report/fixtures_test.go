package report

import "github.com/mcpc-dev/mcpc/internal/diag"

// mapSources is a diag.Sources over fixed text.
type mapSources map[string]map[int]string

func (m mapSources) Line(file string, line, col int) (string, int, bool) {
	s, ok := m[file][line]
	return s, col, ok
}

var testSources = mapSources{
	"b.json": {
		// Tab indentation and wide, non-ASCII characters before the column.
		3: "\t\"é\": \"日本\", \"comand\": 1,\r",
	},
	"a.json": {
		2: "  \"x\": 100,",
	},
	"<environment>": {
		1: "GITHUB_TOKEN=${env:NOPE}",
	},
}

// trickyInput is deliberately unsorted and exercises escaping in every format.
func trickyInput() []diag.Diagnostic {
	return []diag.Diagnostic{
		{File: "b.json", Line: 3, Column: 13, Severity: diag.Warning, Rule: "unknown-field",
			Message: `unknown field "comand"`, Suggestion: `did you mean "command"?`},
		{File: "a.json", Line: 2, Column: 3, Severity: diag.Error, Rule: "type-mismatch",
			Message: "100% wrong, key:value\nsecond line <x> & y", Suggestion: "use a string"},
		{File: "a.json", Line: 0, Severity: diag.Error, Rule: "json-syntax", Message: "file is empty"},
		{File: "<environment>", Line: 1, Column: 14, Severity: diag.Info, Rule: "env-ref-unset",
			Message: "NOPE is not set"},
		{File: "dir\\sub,x:y.json", Line: 7, Column: 1, Severity: diag.Error, Rule: "type-mismatch",
			Message: "no source for this file"},
	}
}
