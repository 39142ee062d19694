package lint

import (
	"bytes"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// inlineMark opens an inline ignore: // mcpc:ignore RULE[,RULE] -- reason.
const inlineMark = "mcpc:ignore"

// InlineIgnores reads the inline ignores of the JSONC sources the host reads
// with comments (the appsettings files): each mcpc:ignore comment ignores
// its rules on its own line when it follows a value there, else on the next
// line that holds one; when that line opens an object or a list (a
// server's key), on every line of it. A file that cannot be read has none
// (the compiler reports it). An ignore without a rule, with an unknown rule
// or without a reason is an error where it stands (deployment-invalid).
// text gives a file's text as the compiler read it, without a byte order
// mark.
func InlineIgnores(files []string, text func(string) ([]byte, error), known []string) ([]Ignore, []diag.Diagnostic) {
	isKnown := map[string]bool{}
	for _, id := range known {
		isKnown[id] = true
	}
	var out []Ignore
	var ds []diag.Diagnostic
	for _, file := range files {
		data, err := text(file)
		if err != nil {
			continue
		}
		var ix *node.LineIndex
		var root *node.Node
		for _, c := range node.Comments(data) {
			text := strings.TrimSpace(c.Text)
			if !strings.HasPrefix(text, inlineMark) {
				continue
			}
			if ix == nil {
				ix = node.NewLineIndex(file, data)
				root, _ = node.ParseJSON(file, data, true)
			}
			pos := ix.Pos(c.Start)
			ids, reason, _ := strings.Cut(strings.TrimPrefix(text, inlineMark), "--")
			if p := reasonProblem(reason); p != "" {
				ds = append(ds, rules.DeploymentInvalid.At(pos, p, "// mcpc:ignore package-unpinned -- the image pins the package by digest"))
				continue
			}
			from := pos.Line
			if c.Alone {
				from = nextValueLine(data, c.End, ix)
			}
			to := lastLineOf(root, from, ix)
			named := strings.FieldsFunc(ids, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
			if len(named) == 0 {
				ds = append(ds, rules.DeploymentInvalid.At(pos, "an inline ignore names the rules it ignores",
					"// mcpc:ignore package-unpinned -- the image pins the package by digest"))
			}
			for _, id := range named {
				if !isKnown[id] {
					ds = append(ds, unknownRule(pos, id, known))
					continue
				}
				if id == rules.IgnoreUnused.ID {
					ds = append(ds, rules.DeploymentInvalid.At(pos, "an ignore-unused finding is not ignored: remove the ignore it names", ""))
					continue
				}
				out = append(out, Ignore{Rule: id, Reason: strings.TrimSpace(reason), Pos: pos, File: file, From: from, To: to})
			}
		}
	}
	return out, ds
}

// nextValueLine is the line of the first byte after offset off that is
// neither space nor part of a comment: what a comment on a line of its own
// is about.
func nextValueLine(data []byte, off int, ix *node.LineIndex) int {
	for off < len(data) {
		rest := data[off:]
		switch {
		case strings.ContainsRune(" \t\r\n", rune(rest[0])):
			off++
		case bytes.HasPrefix(rest, []byte("//")):
			if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
				off += nl
			} else {
				off = len(data)
			}
		case bytes.HasPrefix(rest, []byte("/*")):
			if end := bytes.Index(rest[2:], []byte("*/")); end >= 0 {
				off += 2 + end + 2
			} else {
				off = len(data)
			}
		default:
			return ix.Pos(off).Line
		}
	}
	return ix.Pos(len(data)).Line
}

// lastLineOf is the last line of the object or list whose key or opening
// stands on line (line itself when none does).
func lastLineOf(root *node.Node, line int, ix *node.LineIndex) int {
	last := line
	var walk func(n *node.Node, keyLine int)
	walk = func(n *node.Node, keyLine int) {
		if n == nil {
			return
		}
		if (n.Kind == node.Object || n.Kind == node.Array) && n.End > 0 && (keyLine == line || n.Pos().Line == line) {
			if end := ix.Pos(int(n.End) - 1).Line; end > last {
				last = end
			}
			return
		}
		for _, e := range n.Elems {
			walk(e, 0)
		}
		for _, m := range n.Members {
			walk(m.Value, m.KeyPos().Line)
		}
	}
	walk(root, 0)
	return last
}
