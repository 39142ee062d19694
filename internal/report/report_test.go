package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

func render(t *testing.T, format string, opts Options, ds []diag.Diagnostic) string {
	t.Helper()
	p, err := New(format, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.Print(&b, ds); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	withSources := Options{Sources: testSources, ToolVersion: "1.2.3"}
	tests := []struct {
		name   string
		format string
		opts   Options
		in     []diag.Diagnostic
		want   string
	}{
		{"text", "text", withSources, trickyInput(), "" +
			"<environment>:1:14: info: NOPE is not set [env-ref-unset]\n" +
			"  1 | GITHUB_TOKEN=${env:NOPE}\n" +
			"    |              ^\n" +
			"a.json: error: file is empty [json-syntax]\n" +
			"a.json:2:3: error: 100% wrong, key:value\\nsecond line <x> & y [type-mismatch]\n" +
			"  2 |   \"x\": 100,\n" +
			"    |   ^\n" +
			"  suggestion: use a string\n" +
			"b.json:3:13: warning: unknown field \"comand\" [unknown-field]\n" +
			"  3 | \t\"é\": \"日本\", \"comand\": 1,\n" +
			"    | \t             ^\n" + // tab kept; é one space, 日本 two each
			"  suggestion: did you mean \"command\"?\n" +
			"dir\\sub,x:y.json:7:1: error: no source for this file [type-mismatch]\n"},
		{"text-no-sources", "text", Options{}, trickyInput(), "" +
			"<environment>:1:14: info: NOPE is not set [env-ref-unset]\n" +
			"a.json: error: file is empty [json-syntax]\n" +
			"a.json:2:3: error: 100% wrong, key:value\\nsecond line <x> & y [type-mismatch]\n" +
			"  suggestion: use a string\n" +
			"b.json:3:13: warning: unknown field \"comand\" [unknown-field]\n" +
			"  suggestion: did you mean \"command\"?\n" +
			"dir\\sub,x:y.json:7:1: error: no source for this file [type-mismatch]\n"},
		{"text-oneline", "text", Options{Sources: testSources, OneLine: true}, trickyInput(), "" +
			"<environment>:1:14: info: NOPE is not set [env-ref-unset]\n" +
			"a.json: error: file is empty [json-syntax]\n" +
			"a.json:2:3: error: 100% wrong, key:value\\nsecond line <x> & y [type-mismatch]\n" +
			"b.json:3:13: warning: unknown field \"comand\" [unknown-field]\n" +
			"dir\\sub,x:y.json:7:1: error: no source for this file [type-mismatch]\n"},
		{"text-odd", "text", Options{Sources: mapSources{"x\ny": {4: "\x1b[31mred\u202e", 5: "ab"}}}, []diag.Diagnostic{
			{File: "x\ny", Line: 4, Column: 3, Severity: diag.Error, Rule: "r", Message: "esc \x1b[2J bidi \u202e bad \xff"},
			{File: "x\ny", Line: 4, Severity: diag.Warning, Message: "no column, no rule"},
			{File: "x\ny", Line: 5, Column: 5, Severity: "", Rule: "r", Message: "past the end"},
			{File: "x\ny", Line: 6, Severity: diag.Info, Rule: "r", Message: "title \x1b]0;pwned\x07 cr\rFAKE c1 \u009b2J tab\tcell",
				Suggestion: "also \x1b[8mhidden"},
		}, "" +
			"x\\ny:4: warning: no column, no rule\n" +
			"  4 | \\x1b[31mred\\u202e\n" +
			"x\\ny:4:3: error: esc \\x1b[2J bidi \\u202e bad \\xff [r]\n" +
			"  4 | \\x1b[31mred\\u202e\n" +
			"    |      ^\n" +
			"x\\ny:5:5: info: past the end [r]\n" +
			"  5 | ab\n" +
			"    |     ^\n" +
			"x\\ny:6: info: title \\x1b]0;pwned\\x07 cr\\rFAKE c1 \\u009b2J tab\\tcell [r]\n" +
			"  suggestion: also \\x1b[8mhidden\n"},
		{"text-color", "text", Options{Sources: testSources, Color: true}, trickyInput()[:2], "" +
			"\x1b[1ma.json:2:3\x1b[0m: \x1b[1;31merror\x1b[0m: 100% wrong, key:value\\nsecond line <x> & y [type-mismatch]\n" +
			"  2 |   \"x\": 100,\n" +
			"    |   \x1b[1;32m^\x1b[0m\n" +
			"  \x1b[36msuggestion:\x1b[0m use a string\n" +
			"\x1b[1mb.json:3:13\x1b[0m: \x1b[1;33mwarning\x1b[0m: unknown field \"comand\" [unknown-field]\n" +
			"  3 | \t\"é\": \"日本\", \"comand\": 1,\n" +
			"    | \t             \x1b[1;32m^\x1b[0m\n" +
			"  \x1b[36msuggestion:\x1b[0m did you mean \"command\"?\n"},
		{"text-empty", "text", withSources, nil, ""},

		{"json", "json", withSources, trickyInput(), `[
  {
    "file": "<environment>",
    "line": 1,
    "column": 14,
    "severity": "info",
    "rule": "env-ref-unset",
    "message": "NOPE is not set"
  },
  {
    "file": "a.json",
    "line": 0,
    "column": 0,
    "severity": "error",
    "rule": "json-syntax",
    "message": "file is empty"
  },
  {
    "file": "a.json",
    "line": 2,
    "column": 3,
    "severity": "error",
    "rule": "type-mismatch",
    "message": "100% wrong, key:value\nsecond line <x> & y",
    "suggestion": "use a string"
  },
  {
    "file": "b.json",
    "line": 3,
    "column": 13,
    "severity": "warning",
    "rule": "unknown-field",
    "message": "unknown field \"comand\"",
    "suggestion": "did you mean \"command\"?"
  },
  {
    "file": "dir\\sub,x:y.json",
    "line": 7,
    "column": 1,
    "severity": "error",
    "rule": "type-mismatch",
    "message": "no source for this file"
  }
]
`},
		{"json-empty", "json", Options{}, nil, "[]\n"},
		{"json-empty-slice", "json", Options{}, []diag.Diagnostic{}, "[]\n"},

		{"github", "github", withSources, trickyInput(), "" +
			"::notice file=<environment>,line=1,col=14,title=env-ref-unset::NOPE is not set\n" +
			"::error file=a.json,title=json-syntax::file is empty\n" +
			"::error file=a.json,line=2,col=3,title=type-mismatch::100%25 wrong, key:value%0Asecond line <x> & y%0Asuggestion: use a string\n" +
			"::warning file=b.json,line=3,col=13,title=unknown-field::unknown field \"comand\"%0Asuggestion: did you mean \"command\"?\n" +
			"::error file=dir\\sub%2Cx%3Ay.json,line=7,col=1,title=type-mismatch::no source for this file\n"},
		{"github-odd", "github", Options{}, []diag.Diagnostic{
			{File: "50%\r\n.json", Line: 2, Severity: diag.Info, Rule: "a,b:c", Message: "cr\r\nlf ::set-env name=X::1"},
			{Severity: diag.Warning, Message: "no file"},
		}, "" +
			"::warning::no file\n" +
			"::notice file=50%25%0D%0A.json,line=2,title=a%2Cb%3Ac::cr%0D%0Alf ::set-env name=X::1\n"},
		// \r and \n are the workflow command's to encode; every other
		// control character is escaped as in the text format.
		{"github-controls", "github", Options{}, []diag.Diagnostic{
			{File: "a\x1b[2J.json", Line: 1, Severity: diag.Error, Rule: "r\u009b", Message: "title \x1b]0;pwned\x07 cr\rFAKE c1 \u009b2J bidi \u202e bad \xff",
				Suggestion: "\x1b[8mhidden"},
		}, "" +
			"::error file=a\\x1b[2J.json,line=1,title=r\\u009b::title \\x1b]0;pwned\\x07 cr%0DFAKE c1 \\u009b2J bidi \\u202e bad \\xff%0Asuggestion: \\x1b[8mhidden\n"},
		{"github-empty", "github", Options{}, nil, ""},

		{"sarif", "sarif", withSources, trickyInput(), sarifGolden},
		{"sarif-empty", "sarif", Options{}, nil, `{
  "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
  "version": "2.1.0",
  "runs": [
    {
      "tool": {
        "driver": {
          "name": "mcpc",
          "informationUri": "https://github.com/mcpc-dev/mcpc",
          "rules": []
        }
      },
      "invocations": [
        {
          "executionSuccessful": true
        }
      ],
      "columnKind": "unicodeCodePoints",
      "results": []
    }
  ]
}
`},
		{"sarif-unknown-rule", "sarif", Options{Rules: func(string) (rules.Rule, bool) { return rules.Rule{}, false }}, []diag.Diagnostic{
			{File: "C:\\cfg\\a b.json", Line: 1, Severity: "weird", Rule: "no-such-rule", Message: "m"},
			{Severity: diag.Error, Message: "nowhere"},
		}, `{
  "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
  "version": "2.1.0",
  "runs": [
    {
      "tool": {
        "driver": {
          "name": "mcpc",
          "informationUri": "https://github.com/mcpc-dev/mcpc",
          "rules": [
            {
              "id": "no-such-rule",
              "shortDescription": {
                "text": "no-such-rule"
              }
            }
          ]
        }
      },
      "invocations": [
        {
          "executionSuccessful": true
        }
      ],
      "columnKind": "unicodeCodePoints",
      "results": [
        {
          "level": "error",
          "message": {
            "text": "nowhere"
          }
        },
        {
          "ruleId": "no-such-rule",
          "ruleIndex": 0,
          "level": "note",
          "message": {
            "text": "m"
          },
          "locations": [
            {
              "physicalLocation": {
                "artifactLocation": {
                  "uri": "file:///C:/cfg/a%20b.json"
                },
                "region": {
                  "startLine": 1
                }
              }
            }
          ]
        }
      ]
    }
  ]
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, tt.format, tt.opts, tt.in)
			if got != tt.want {
				t.Errorf("output mismatch\n--- got\n%s\n--- want\n%s", got, tt.want)
			}
			// Same input, same bytes.
			if again := render(t, tt.format, tt.opts, tt.in); again != got {
				t.Errorf("output not deterministic")
			}
		})
	}
}

const sarifGolden = `{
  "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
  "version": "2.1.0",
  "runs": [
    {
      "tool": {
        "driver": {
          "name": "mcpc",
          "informationUri": "https://github.com/mcpc-dev/mcpc",
          "version": "1.2.3",
          "rules": [
            {
              "id": "env-ref-unset",
              "shortDescription": {
                "text": "${env:NAME} names a variable that is not set in the host environment; the server gets an empty value."
              },
              "help": {
                "text": "${env:NAME} names a variable that is not set in the host environment; the server gets an empty value.\n\nExample:\n\"GITHUB_TOKEN\": \"${env:GITHUB_TOKEN}\" with GITHUB_TOKEN unset",
                "markdown": "${env:NAME} names a variable that is not set in the host environment; the server gets an empty value.\n\nExample:\n\n` + "`" + `` + "`" + `` + "`" + `\n\"GITHUB_TOKEN\": \"${env:GITHUB_TOKEN}\" with GITHUB_TOKEN unset\n` + "`" + `` + "`" + `` + "`" + `"
              },
              "helpUri": "https://github.com/mcpc-dev/mcpc/blob/main/docs/rules.md#env-ref-unset",
              "defaultConfiguration": {
                "level": "warning"
              }
            },
            {
              "id": "json-syntax",
              "shortDescription": {
                "text": "An input file is not valid JSON (appsettings files may have comments and trailing commas; settings.json may not), or nests objects and arrays deeper than its reader does (64 levels for the files the volcanic host reads, 900 for mcp_config.json)."
              },
              "help": {
                "text": "An input file is not valid JSON (appsettings files may have comments and trailing commas; settings.json may not), or nests objects and arrays deeper than its reader does (64 levels for the files the volcanic host reads, 900 for mcp_config.json).\n\nExample:\n{\"Mcp\": {\"Servers\": {\"github\": {\"Command\": \"npx\",}}\n  (missing closing brace)",
                "markdown": "An input file is not valid JSON (appsettings files may have comments and trailing commas; settings.json may not), or nests objects and arrays deeper than its reader does (64 levels for the files the volcanic host reads, 900 for mcp_config.json).\n\nExample:\n\n` + "`" + `` + "`" + `` + "`" + `\n{\"Mcp\": {\"Servers\": {\"github\": {\"Command\": \"npx\",}}\n  (missing closing brace)\n` + "`" + `` + "`" + `` + "`" + `"
              },
              "helpUri": "https://github.com/mcpc-dev/mcpc/blob/main/docs/rules.md#json-syntax",
              "defaultConfiguration": {
                "level": "error"
              }
            },
            {
              "id": "type-mismatch",
              "shortDescription": {
                "text": "A value of the wrong type, or a host value that does not convert as the .NET binder converts it (integers: decimal, or hexadecimal after #, 0x or &h; booleans: true or false in any case)."
              },
              "help": {
                "text": "A value of the wrong type, or a host value that does not convert as the .NET binder converts it (integers: decimal, or hexadecimal after #, 0x or &h; booleans: true or false in any case).\n\nExample:\n\"StartupTimeoutSeconds\": \"sixty\"",
                "markdown": "A value of the wrong type, or a host value that does not convert as the .NET binder converts it (integers: decimal, or hexadecimal after #, 0x or &h; booleans: true or false in any case).\n\nExample:\n\n` + "`" + `` + "`" + `` + "`" + `\n\"StartupTimeoutSeconds\": \"sixty\"\n` + "`" + `` + "`" + `` + "`" + `"
              },
              "helpUri": "https://github.com/mcpc-dev/mcpc/blob/main/docs/rules.md#type-mismatch",
              "defaultConfiguration": {
                "level": "error"
              }
            },
            {
              "id": "unknown-field",
              "shortDescription": {
                "text": "A field that the host does not know; it is ignored, so a typo silently loses the setting."
              },
              "help": {
                "text": "A field that the host does not know; it is ignored, so a typo silently loses the setting.\n\nExample:\n\"github\": {\"comand\": \"npx\"}",
                "markdown": "A field that the host does not know; it is ignored, so a typo silently loses the setting.\n\nExample:\n\n` + "`" + `` + "`" + `` + "`" + `\n\"github\": {\"comand\": \"npx\"}\n` + "`" + `` + "`" + `` + "`" + `"
              },
              "helpUri": "https://github.com/mcpc-dev/mcpc/blob/main/docs/rules.md#unknown-field",
              "defaultConfiguration": {
                "level": "warning"
              }
            }
          ]
        }
      },
      "invocations": [
        {
          "executionSuccessful": true
        }
      ],
      "columnKind": "unicodeCodePoints",
      "results": [
        {
          "ruleId": "env-ref-unset",
          "ruleIndex": 0,
          "level": "note",
          "message": {
            "text": "NOPE is not set"
          },
          "locations": [
            {
              "physicalLocation": {
                "artifactLocation": {
                  "uri": "%3Cenvironment%3E"
                },
                "region": {
                  "startLine": 1,
                  "startColumn": 14
                }
              }
            }
          ]
        },
        {
          "ruleId": "json-syntax",
          "ruleIndex": 1,
          "level": "error",
          "message": {
            "text": "file is empty"
          },
          "locations": [
            {
              "physicalLocation": {
                "artifactLocation": {
                  "uri": "a.json"
                }
              }
            }
          ]
        },
        {
          "ruleId": "type-mismatch",
          "ruleIndex": 2,
          "level": "error",
          "message": {
            "text": "100% wrong, key:value\nsecond line <x> & y\nsuggestion: use a string"
          },
          "locations": [
            {
              "physicalLocation": {
                "artifactLocation": {
                  "uri": "a.json"
                },
                "region": {
                  "startLine": 2,
                  "startColumn": 3
                }
              }
            }
          ]
        },
        {
          "ruleId": "unknown-field",
          "ruleIndex": 3,
          "level": "warning",
          "message": {
            "text": "unknown field \"comand\"\nsuggestion: did you mean \"command\"?"
          },
          "locations": [
            {
              "physicalLocation": {
                "artifactLocation": {
                  "uri": "b.json"
                },
                "region": {
                  "startLine": 3,
                  "startColumn": 13
                }
              }
            }
          ]
        },
        {
          "ruleId": "type-mismatch",
          "ruleIndex": 2,
          "level": "error",
          "message": {
            "text": "no source for this file"
          },
          "locations": [
            {
              "physicalLocation": {
                "artifactLocation": {
                  "uri": "dir/sub,x:y.json"
                },
                "region": {
                  "startLine": 7,
                  "startColumn": 1
                }
              }
            }
          ]
        }
      ]
    }
  ]
}
`

func TestPrintDoesNotMutateInput(t *testing.T) {
	for _, f := range Formats {
		in := trickyInput()
		before := append([]diag.Diagnostic(nil), in...)
		render(t, f, Options{Sources: testSources}, in)
		if !reflect.DeepEqual(in, before) {
			t.Errorf("%s: input slice was modified", f)
		}
	}
}

func TestSARIFValidJSONOneRulePerID(t *testing.T) {
	in := append(trickyInput(), trickyInput()...)
	in = append(in, diag.Diagnostic{File: "z.json", Line: 1, Column: 1, Severity: diag.Error, Rule: "duplicate-key", Message: "dup"})
	out := render(t, "sarif", Options{}, in)
	if !json.Valid([]byte(out)) {
		t.Fatalf("not valid JSON:\n%s", out)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID               string `json:"id"`
						ShortDescription struct {
							Text string `json:"text"`
						} `json:"shortDescription"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("version %q, %d runs", log.Version, len(log.Runs))
	}
	run := log.Runs[0]
	var ids []string
	for _, r := range run.Tool.Driver.Rules {
		ids = append(ids, r.ID)
		want, ok := rules.Lookup(r.ID)
		if !ok || r.ShortDescription.Text != want.Description {
			t.Errorf("rule %s: description %q", r.ID, r.ShortDescription.Text)
		}
	}
	wantIDs := map[string]bool{}
	for _, d := range in {
		wantIDs[d.Rule] = true
	}
	var want []string
	for id := range wantIDs {
		want = append(want, id)
	}
	sort.Strings(want)
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("rules = %v, want %v (one per id, sorted)", ids, want)
	}
	if len(run.Results) != len(in) {
		t.Errorf("%d results, want %d", len(run.Results), len(in))
	}
	for _, r := range run.Results {
		if ids[r.RuleIndex] != r.RuleID {
			t.Errorf("result %s has ruleIndex %d (%s)", r.RuleID, r.RuleIndex, ids[r.RuleIndex])
		}
	}
}

func TestNew(t *testing.T) {
	for _, f := range Formats {
		if p, err := New(f, Options{}); err != nil || p == nil {
			t.Errorf("New(%q) = %v, %v", f, p, err)
		}
	}
	for _, f := range []string{"", "xml", "TEXT", " json"} {
		_, err := New(f, Options{})
		if err == nil {
			t.Fatalf("New(%q) succeeded", f)
		}
		if !strings.Contains(err.Error(), "text, json, sarif, github") {
			t.Errorf("New(%q) error %q does not list the formats", f, err)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	for _, f := range Formats {
		p, _ := New(f, Options{})
		if err := p.Print(failWriter{}, trickyInput()); err == nil || err.Error() != "disk full" {
			t.Errorf("%s: err = %v", f, err)
		}
	}
}

func TestSummary(t *testing.T) {
	e := diag.Diagnostic{Severity: diag.Error}
	w := diag.Diagnostic{Severity: diag.Warning}
	i := diag.Diagnostic{Severity: diag.Info}
	tests := []struct {
		in   []diag.Diagnostic
		want string
	}{
		{nil, "no problems"},
		{[]diag.Diagnostic{e}, "1 error"},
		{[]diag.Diagnostic{e, w, e}, "2 errors, 1 warning"},
		{[]diag.Diagnostic{w, w}, "2 warnings"},
		{[]diag.Diagnostic{i}, "1 info"},
		{[]diag.Diagnostic{e, w, w, i, i}, "1 error, 2 warnings, 2 info"},
	}
	for _, tt := range tests {
		if got := Summary(tt.in); got != tt.want {
			t.Errorf("Summary(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("a", 100) + "X" + strings.Repeat("b", 100)
	tests := []struct {
		name      string
		src       string
		col       int
		line, pad string
	}{
		{"plain", "abc", 2, "abc", " "},
		{"first column", "abc", 1, "abc", ""},
		{"past end", "ab", 5, "ab", "    "},
		{"crlf", "ab\r\n", 3, "ab", "  "},
		{"tabs kept", "\t\tx", 3, "\t\tx", "\t\t"},
		{"combining mark takes no room", "e\u0301x", 3, "e\u0301x", " "},
		{"wide", "日本x", 3, "日本x", "    "},
		{"emoji", "🙂x", 2, "🙂x", "  "},
		{"control escaped", "\x00x", 2, `\x00x`, "    "},
		{"invalid utf-8", "\xffx", 2, `\xffx`, "    "},
		{"long line windowed", long, 101, "..." + strings.Repeat("a", 60) + "X" + strings.Repeat("b", 59) + "...", strings.Repeat(" ", 63)},
		{"long line start", long, 1, strings.Repeat("a", 100) + "X" + strings.Repeat("b", 19) + "...", ""},
		{"long line end", long, 201, "..." + strings.Repeat("a", 19) + "X" + strings.Repeat("b", 100), strings.Repeat(" ", 3+19+1+99)},
		{"long line past end", long, 210, "..." + strings.Repeat("a", 19) + "X" + strings.Repeat("b", 100), strings.Repeat(" ", 3+19+1+100+8)},
		{"bogus column", "ab", 1 << 40, "ab", strings.Repeat(" ", 2+excerptWidth)},
		{"long line far past end", long, 1000, "..." + strings.Repeat("a", 19) + "X" + strings.Repeat("b", 100), strings.Repeat(" ", 3+19+1+100+excerptWidth)},
		{"long line bogus column", long, 1 << 40, "..." + strings.Repeat("a", 19) + "X" + strings.Repeat("b", 100), strings.Repeat(" ", 3+19+1+100+excerptWidth)},
		{"long wide line", strings.Repeat("日", 100), 100, "..." + strings.Repeat("日", 60), strings.Repeat(" ", 3+2*59)},
	}
	for _, tt := range tests {
		line, pad := excerpt(tt.src, tt.col)
		if line != tt.line || pad != tt.pad {
			t.Errorf("%s: excerpt(%q, %d) = %q, %q; want %q, %q", tt.name, tt.src, tt.col, line, pad, tt.line, tt.pad)
		}
	}
}

func TestArtifactURI(t *testing.T) {
	tests := map[string]string{
		"a.json":               "a.json",
		"dir\\sub\\a.json":     "dir/sub/a.json",
		"./rel/a.json":         "./rel/a.json",
		"/abs/a b.json":        "file:///abs/a%20b.json",
		"C:\\Users\\x\\a.json": "file:///C:/Users/x/a.json",
		"a:b.json":             "./a:b.json",
		"100%.json":            "100%25.json",
		"dir/ü#?.json":         "dir/%C3%BC%23%3F.json",
		"<environment>":        "%3Cenvironment%3E",
	}
	for in, want := range tests {
		if got := artifactURI(in); got != want {
			t.Errorf("artifactURI(%q) = %q, want %q", in, got, want)
		}
	}
}

// Color adds markup and nothing else: without its escape sequences the
// colored report is byte for byte the plain one, input escapes included
// (they are shown escaped, so no raw ESC of the input survives).
func TestColorOnlyAddsMarkup(t *testing.T) {
	sgr := regexp.MustCompile("\x1b\\[[0-9;]*m")
	for _, opts := range []Options{{Sources: testSources}, {}, {Sources: testSources, OneLine: true}} {
		plain := render(t, "text", opts, trickyInput())
		opts.Color = true
		colored := render(t, "text", opts, trickyInput())
		if colored == plain {
			t.Fatalf("Color changed nothing:\n%s", colored)
		}
		if got := sgr.ReplaceAllString(colored, ""); got != plain {
			t.Errorf("colored minus markup differs from plain:\n%s\nwant\n%s", got, plain)
		}
		if strings.Contains(plain, "\x1b") {
			t.Errorf("plain output holds an escape: %q", plain)
		}
	}
	// The other formats are data: Color leaves them alone.
	for _, f := range []string{"json", "sarif", "github"} {
		if a, b := render(t, f, Options{}, trickyInput()), render(t, f, Options{Color: true}, trickyInput()); a != b {
			t.Errorf("%s: Color changed the output", f)
		}
	}
}
