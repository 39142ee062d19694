package cli

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/report"
)

// ciRepo is a repository (a .git directory) with two deployments: a/ with
// an unpinned package and a missing runtime that mcpc.cue ignores, b/ with
// an unpinned package.
func ciRepo(t *testing.T) (root, a, b string) {
	t.Helper()
	root = t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dep := range []string{"a", "b"} {
		write(t, root, dep+"/bin/npx", "#!/bin/sh\nexit 0\n")
		if err := os.Chmod(filepath.Join(root, dep, "bin", "npx"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, root, "a/appsettings.json", `{"Mcp": {"Servers": {
  "everything": {"Command": "npx", "Args": ["-y", "@modelcontextprotocol/server-everything"]},
  "fetch": {"Command": "uvx", "Args": ["mcp-server-fetch==2025.4.7"]}}}}`)
	write(t, root, "a/mcpc.cue", `sources: {appsettings: ["appsettings.json"], cleanEnv: true}
target: path: "bin"
ignores: [{path: "appsettings.json", rule: "runtime-missing", reason: "the image installs uv"}]`)
	write(t, root, "b/appsettings.json", `{"Mcp": {"Servers": {"x": {"Command": "npx", "Args": ["-y", "server-x"]}}}}`)
	write(t, root, "b/mcpc.cue", `sources: {appsettings: ["appsettings.json"], cleanEnv: true}
target: path: "bin"`)
	return root, filepath.Join(root, "a"), filepath.Join(root, "b")
}

// The SARIF shape the tests read.
type sarifDoc struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID   string `json:"id"`
					Help *struct {
						Text, Markdown string
					} `json:"help"`
					HelpURI string `json:"helpUri"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []struct {
			ExecutionSuccessful        bool `json:"executionSuccessful"`
			ToolExecutionNotifications []struct {
				Level   string `json:"level"`
				Message struct{ Text string }
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		OriginalURIBaseIDs map[string]struct{ URI string } `json:"originalUriBaseIds"`
		Results            []struct {
			RuleID    string `json:"ruleId"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI       string `json:"uri"`
						URIBaseID string `json:"uriBaseId"`
					} `json:"artifactLocation"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			Suppressions []struct{ Kind, Justification string } `json:"suppressions"`
		} `json:"results"`
	} `json:"runs"`
}

// The JUnit shape GitLab and Jenkins read.
type junitDoc struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Suites  []struct {
		Name  string `xml:"name,attr"`
		Tests int    `xml:"tests,attr"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// checkGitLab: stdout is a Code Quality report with every key GitLab
// requires (description, check_name, fingerprint, severity, location.path,
// location.lines.begin), a known severity and distinct fingerprints.
func checkGitLab(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var issues []map[string]any
	if err := json.Unmarshal([]byte(stdout), &issues); err != nil {
		t.Fatalf("gitlab: not one JSON array: %v\n%s", err, stdout)
	}
	fps := map[string]bool{}
	for _, is := range issues {
		for _, k := range []string{"description", "check_name", "fingerprint", "severity"} {
			if s, _ := is[k].(string); s == "" {
				t.Errorf("gitlab: issue without %s: %v", k, is)
			}
		}
		switch is["severity"] {
		case "info", "minor", "major", "critical", "blocker":
		default:
			t.Errorf("gitlab: severity %v", is["severity"])
		}
		loc, _ := is["location"].(map[string]any)
		lines, _ := loc["lines"].(map[string]any)
		if p, _ := loc["path"].(string); p == "" || filepath.IsAbs(p) {
			t.Errorf("gitlab: location.path %v", loc["path"])
		}
		if b, _ := lines["begin"].(float64); b < 1 {
			t.Errorf("gitlab: location.lines.begin %v", lines["begin"])
		}
		fp, _ := is["fingerprint"].(string)
		if fps[fp] {
			t.Errorf("gitlab: fingerprint %s twice", fp)
		}
		fps[fp] = true
	}
	return issues
}

// lint of several deployments prints one document in every format, paths
// relative to the repository root.
func TestLintOneDocumentPerRun(t *testing.T) {
	_, a, b := ciRepo(t)
	for _, format := range report.Documents {
		code, stdout, stderr := run(t, "lint", "--format", format, a, b)
		if code != ExitOK || strings.Count(stderr, "mcpc.cue: 1 server") != 1 || strings.Count(stderr, "mcpc.cue: 2 servers") != 1 {
			t.Errorf("%s: exit %d: %s", format, code, stderr)
		}
		switch format {
		case "json":
			var ds []map[string]any
			if err := json.Unmarshal([]byte(stdout), &ds); err != nil || len(ds) != 2 {
				t.Errorf("json: %d diagnostics, %v\n%s", len(ds), err, stdout)
			}
		case "sarif":
			var log sarifDoc
			if err := json.Unmarshal([]byte(stdout), &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Results) != 3 || len(log.Runs[0].Invocations) != 1 {
				t.Fatalf("sarif: %v\n%s", err, stdout)
			}
		case "junit":
			var doc junitDoc
			if err := xml.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Suites) != 2 {
				t.Fatalf("junit: %v\n%s", err, stdout)
			}
			for i, want := range []string{"a/appsettings.json", "b/appsettings.json"} {
				s := doc.Suites[i]
				if s.Name != want || s.Tests != 1 || s.Cases[0].Name != "package-unpinned" || s.Cases[0].Classname != want ||
					s.Cases[0].Failure != nil || !strings.Contains(s.Cases[0].SystemOut, "without an exact version") {
					t.Errorf("junit: suite %d: %+v", i, s)
				}
			}
		case "gitlab":
			issues := checkGitLab(t, stdout)
			if len(issues) != 2 || issues[0]["location"].(map[string]any)["path"] != "a/appsettings.json" || issues[0]["severity"] != "minor" {
				t.Errorf("gitlab:\n%s", stdout)
			}
			_, again, _ := run(t, "lint", "--format", format, a, b)
			if again != stdout {
				t.Errorf("gitlab: a second run differs:\n%s\n%s", stdout, again)
			}
		}
	}
	// --strict makes the warnings JUnit failures, as it makes them exit 1.
	code, stdout, _ := run(t, "lint", "--format", "junit", "--strict", a, b)
	var doc junitDoc
	if err := xml.Unmarshal([]byte(stdout), &doc); err != nil || code != ExitProblems || doc.Suites[0].Cases[0].Failure == nil {
		t.Errorf("junit --strict: exit %d, %v\n%s", code, err, stdout)
	}
}

// SARIF carries the rules' help and documentation, the ignored findings as
// suppressed with the reason, one invocation, and paths relative to the
// repository root.
func TestLintSarifForCodeScanning(t *testing.T) {
	root, a, b := ciRepo(t)
	_, stdout, stderr := run(t, "lint", "--format", "sarif", a, b)
	var log sarifDoc
	if err := json.Unmarshal([]byte(stdout), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("%v\n%s%s", err, stdout, stderr)
	}
	r := log.Runs[0]
	if len(r.Invocations) != 1 || !r.Invocations[0].ExecutionSuccessful {
		t.Errorf("invocations: %+v", r.Invocations)
	}
	if got, want := r.OriginalURIBaseIDs["%SRCROOT%"].URI, "file://"+filepath.ToSlash(root)+"/"; got != want {
		t.Errorf("originalUriBaseIds: %q, want %q", got, want)
	}
	for _, rule := range r.Tool.Driver.Rules {
		if rule.Help == nil || !strings.Contains(rule.Help.Text, "Example:") || !strings.Contains(rule.Help.Markdown, "```") ||
			rule.HelpURI != "https://github.com/mcpc-dev/mcpc/blob/main/docs/rules.md#"+rule.ID {
			t.Errorf("rule %s: help %+v, helpUri %q", rule.ID, rule.Help, rule.HelpURI)
		}
	}
	suppressed := 0
	for _, res := range r.Results {
		loc := res.Locations[0].PhysicalLocation.ArtifactLocation
		if loc.URIBaseID != "%SRCROOT%" || (loc.URI != "a/appsettings.json" && loc.URI != "b/appsettings.json") {
			t.Errorf("%s: location %+v", res.RuleID, loc)
		}
		if len(res.Suppressions) > 0 {
			suppressed++
			if res.RuleID != "runtime-missing" || res.Suppressions[0].Kind != "external" || res.Suppressions[0].Justification != "the image installs uv" {
				t.Errorf("suppression: %s %+v", res.RuleID, res.Suppressions)
			}
		}
	}
	if suppressed != 1 {
		t.Errorf("%d suppressed results, want 1:\n%s", suppressed, stdout)
	}
}

// A run that ends with exit 2 still prints a valid document in every
// document format, which says it failed and why.
func TestFailedRunPrintsADocument(t *testing.T) {
	root, a, _ := ciRepo(t)
	broken := filepath.Join(root, "broken")
	write(t, broken, "mcpc.cue", `sourcez: {}`)
	t.Chdir(broken) // validate reads the mcpc.cue of the current directory
	cases := []struct {
		name string
		args []string
		want string // in the failure's message
		ds   int    // diagnostics besides the failure
		// SARIF's results: ds and the suppressed findings
		results int
	}{
		{"bad flag", []string{"lint", "--format", "sarif", "--nope"}, "unknown flag --nope", 0, 0},
		{"bad flag after", []string{"validate", "--nope", "--format=sarif"}, "unknown flag --nope", 0, 0},
		{"unreadable input", []string{"lint", "--format", "sarif", "--appsettings", filepath.Join(a, "no-such.json"), a}, "no-such.json", 0, 0},
		{"nothing to check", []string{"lint", "--format", "sarif", t.TempDir()}, "nothing to check", 0, 0},
		// The arguments are checked before anything is linted.
		{"not a directory", []string{"lint", "--format", "sarif", a, filepath.Join(a, "nope")}, "not a directory", 0, 0},
		// A deployment that cannot be linted does not hide the others: their
		// findings are in the document.
		{"broken mcpc.cue", []string{"lint", "--format", "sarif", a, broken}, "configuration is not valid", 2, 3},
		{"broken mcpc.cue validate", []string{"validate", "--format", "sarif"}, "configuration is not valid", 1, 1},
	}
	for _, tc := range cases {
		for _, format := range report.Documents {
			args := append([]string(nil), tc.args...)
			for i := range args {
				if args[i] == "sarif" {
					args[i] = format
				}
				args[i] = strings.Replace(args[i], "=sarif", "="+format, 1)
			}
			code, stdout, stderr := run(t, args...)
			if code != ExitUsage || stdout == "" {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %s", tc.name, format, code, stdout, stderr)
				continue
			}
			switch format {
			case "json":
				var ds []struct{ Severity, Rule, Message string }
				if err := json.Unmarshal([]byte(stdout), &ds); err != nil || len(ds) != tc.ds+1 || !strings.Contains(ds[len(ds)-1].Message, tc.want) {
					t.Errorf("%s json: %v\n%s", tc.name, err, stdout)
				}
			case "sarif":
				var log sarifDoc
				if err := json.Unmarshal([]byte(stdout), &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Invocations) != 1 {
					t.Errorf("%s sarif: %v\n%s", tc.name, err, stdout)
					continue
				}
				inv := log.Runs[0].Invocations[0]
				if inv.ExecutionSuccessful || len(inv.ToolExecutionNotifications) != 1 || inv.ToolExecutionNotifications[0].Level != "error" ||
					!strings.Contains(inv.ToolExecutionNotifications[0].Message.Text, tc.want) || len(log.Runs[0].Results) != tc.results {
					t.Errorf("%s sarif: %+v\n%s", tc.name, inv, stdout)
				}
			case "junit":
				var doc junitDoc
				if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Errorf("%s junit: %v\n%s", tc.name, err, stdout)
					continue
				}
				last := doc.Suites[len(doc.Suites)-1]
				if c := last.Cases[0]; c.Error == nil || !strings.Contains(c.Error.Message, tc.want) {
					t.Errorf("%s junit:\n%s", tc.name, stdout)
				}
			case "gitlab":
				issues := checkGitLab(t, stdout)
				if len(issues) != tc.ds+1 || !strings.Contains(issues[len(issues)-1]["description"].(string), tc.want) {
					t.Errorf("%s gitlab:\n%s", tc.name, stdout)
				}
			}
		}
	}
}

// No secret of the deployment appears in the document formats either.
func TestLintDocumentsNeverPrintASecret(t *testing.T) {
	const canary = "canary-7f3a9c2e5b1d4068-secret"
	dir := t.TempDir()
	write(t, dir, "mcpc.cue", `sources: {appsettings: ["appsettings.json"], cleanEnv: true, env: ["API_TOKEN=`+canary+`"]}
target: path: "bin"`)
	write(t, dir, "appsettings.json", `{"Mcp": {"Servers": {"x": {"Command": "npx", "Args": ["-y", "server-x", "--token", "`+canary+`"],
		"Env": {"K": "${env:API_TOKEN}"}}}}}`)
	for _, format := range report.Formats {
		_, stdout, stderr := run(t, "lint", "--format", format, dir, dir)
		if strings.Contains(stdout+stderr, canary) {
			t.Errorf("%s: the canary is in the output:\n%s%s", format, stdout, stderr)
		}
		if !strings.Contains(stdout, "secret-literal") {
			t.Errorf("%s: expected findings missing:\n%s", format, stdout)
		}
	}
}
