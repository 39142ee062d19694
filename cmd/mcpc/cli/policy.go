package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/internal/atomicfile"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/report"
	"github.com/mcpc-dev/mcpc/policies/lint"
)

func policyCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "policy",
		Usage:     "develop a policy pack: run its test deployments",
		UsageText: "mcpc policy test DIR… [--update]",
		Subcommands: []*ucli.Command{{
			Name:  "test",
			Usage: "run each test deployment of a pack (DIR/testdata/*) and compare its findings with its expected.txt",
			UsageText: `mcpc policy test DIR… [--update]

Each directory of DIR/testdata is a test deployment: its sources (an mcpc.cue, or the sources
mcpc lint recognises without one) and expected.txt, the findings the pack must produce there, as
mcpc lint prints them without excerpts, with paths relative to the case's directory (an empty
file: no finding). The pack runs alone (no other pack; a pack named like a built-in one replaces
it) over a host environment that is only what the case's sources say. Only the pack's own
findings, policy-invalid and the compiler's errors are compared. Exit 1 when a case differs
(the difference is shown: - expected, + found) or a rule of the pack is reported by no case;
2 when the pack or a case cannot be read.

Examples:
   mcpc policy test policies/team
   mcpc policy test policies/team --update    # write each case's expected.txt from what it finds`,
			Flags: []ucli.Flag{
				&ucli.BoolFlag{Name: "update", Usage: "write each case's expected.txt from what the pack finds (read the diff before committing it)"},
			},
			Action: policyTestAction,
		}},
	}
}

func policyTestAction(c *ucli.Context) error {
	dirs := c.Args().Slice()
	if len(dirs) == 0 {
		return usageError("policy test: give the pack's DIR (mcpc policy test policies/team)")
	}
	w := c.App.Writer
	failed := false
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usageError("policy test %s: not a directory", dir)
		}
		pack, cases, ds, err := lint.TestPack(dir)
		if err != nil {
			return inputErr(err)
		}
		if len(ds) > 0 {
			src := sourcesOf()
			for _, d := range ds {
				if data, err := inputfile.ReadText(d.File); err == nil {
					src.withFile(d.File, data)
				}
			}
			if err := printDiagnostics(w, plainText(c), ds, src, nil); err != nil {
				return err
			}
			return usageError("policy test %s: the pack, or the mcpc.cue of a case, is not valid (%s)", dir, report.Summary(ds))
		}
		for _, pc := range cases {
			got, err := packFindings(pc)
			if err != nil {
				return err
			}
			file := filepath.Join(pc.Dir, lint.ExpectedFile)
			if c.Bool("update") {
				if err := atomicfile.Replace(file, []byte(got), 0o644, nil); err != nil {
					return &exitError{code: ExitInternal, msg: err.Error()}
				}
				fmt.Fprintf(w, "wrote %s\n", file)
				continue
			}
			want, err := inputfile.ReadText(file)
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(w, "FAIL %s: no %s; it finds:\n%s", pc.Dir, lint.ExpectedFile, indented(got))
				failed = true
				continue
			}
			if err != nil {
				return usageError("policy test: %v", err)
			}
			if string(want) == got {
				fmt.Fprintf(w, "ok   %s\n", pc.Dir)
				continue
			}
			failed = true
			fmt.Fprintf(w, "FAIL %s: the findings differ from %s (- expected, + found):\n%s", pc.Dir, lint.ExpectedFile, lineDiff(string(want), got))
		}
		if c.Bool("update") {
			continue
		}
		for _, id := range lint.Untested(pack, cases) {
			failed = true
			fmt.Fprintf(w, "FAIL %s: rule %s is reported by no case of %s (give it a case that triggers it, and a near miss)\n", dir, id, lint.TestDataDir)
		}
	}
	if failed {
		return &exitError{code: ExitProblems}
	}
	return nil
}

// packFindings are a case's findings as lint's text format prints them
// without excerpts: the format of expected.txt.
func packFindings(pc lint.PackCase) (string, error) {
	p, err := report.New("text", report.Options{Redact: pc.Redact})
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if len(pc.Diagnostics) > 0 {
		if err := p.Print(&buf, pc.Diagnostics); err != nil {
			return "", err
		}
	}
	return buf.String(), nil
}

func indented(s string) string {
	if s == "" {
		return "    (nothing)\n"
	}
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}

// lineDiff shows want against got line by line: the lines of a longest
// common subsequence unmarked, the others "-" (only in want) or "+" (only
// in got). Expected files are a few lines, so the quadratic table is cheap.
func lineDiff(want, got string) string {
	a, b := splitLines(want), splitLines(got)
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("    " + a[i] + "\n")
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("  - " + a[i] + "\n")
			i++
		default:
			out.WriteString("  + " + b[j] + "\n")
			j++
		}
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
