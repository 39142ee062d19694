package craftbot

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/node"
)

// CraftBot reads mcp_config.json with Python's json.load and checks no
// type beyond what its loader tests: a value is used as Python holds it.
// These helpers say what Python makes of a JSON value: whether it is true
// (truthy), and its text (pyStr), as f"mcp_{name}" writes it.

// truthy is Python's bool() of the value json.load gives for n: null,
// false, 0, "", [] and {} are false; everything else, NaN and the string
// "false" included, is true.
func truthy(n *node.Node) bool {
	if n == nil {
		return false
	}
	switch n.Kind {
	case node.Null:
		return false
	case node.Bool:
		return n.Bool
	case node.Number:
		f := pyNumber(n.Text)
		return f != 0 || math.IsNaN(f)
	case node.String:
		return n.Text != ""
	case node.Array:
		return len(n.Elems) > 0
	case node.Object:
		return len(n.Members) > 0
	}
	return false
}

// pyNumber is the value of a JSON number literal as a float64 (a Python int
// beyond float64 is only compared with 0 here); NaN, Infinity and -Infinity
// are Python's own literals.
func pyNumber(lit string) float64 {
	switch lit {
	case "NaN":
		return math.NaN()
	case "Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0
	}
	return f
}

// isInt reports whether json.load reads lit as a Python int (no fraction,
// no exponent).
func isInt(lit string) bool {
	return !strings.ContainsAny(lit, ".eE") && lit != "NaN" && !strings.HasSuffix(lit, "Infinity")
}

// pyStr is Python's str() of the value json.load gives for n.
func pyStr(n *node.Node) string {
	switch n.Kind {
	case node.Null:
		return "None"
	case node.Bool:
		if n.Bool {
			return "True"
		}
		return "False"
	case node.Number:
		return pyNumberStr(n.Text)
	case node.String:
		return n.Text
	}
	return pyRepr(n)
}

// pyNumberStr is str() of the Python number json.load makes of lit: an
// int as its digits (-0 is 0), a float as repr writes it (1.0, 1e+16,
// 1e-05, inf, nan).
func pyNumberStr(lit string) string {
	if isInt(lit) {
		var i big.Int
		if _, ok := i.SetString(lit, 10); ok {
			return i.String()
		}
		return lit
	}
	f := pyNumber(lit)
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e // Go writes the shortest digits and a two-digit exponent, as Python's repr does
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}

// pyRepr is Python's repr() of the value json.load gives for n, as str()
// writes a list or a dict.
func pyRepr(n *node.Node) string {
	var b strings.Builder
	var walk func(n *node.Node)
	walk = func(n *node.Node) {
		switch n.Kind {
		case node.String:
			b.WriteString(pyStrRepr(n.Text))
		case node.Array:
			b.WriteByte('[')
			for i, e := range n.Elems {
				if i > 0 {
					b.WriteString(", ")
				}
				walk(e)
			}
			b.WriteByte(']')
		case node.Object:
			b.WriteByte('{')
			for i, m := range n.Members {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(pyStrRepr(m.Key))
				b.WriteString(": ")
				walk(m.Value)
			}
			b.WriteByte('}')
		default:
			b.WriteString(pyStr(n))
		}
	}
	walk(n)
	return b.String()
}

// pyStrRepr is repr() of a Python string: single quotes unless the text
// holds one and no double quote.
func pyStrRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x` + strconv.FormatInt(int64(r)|0x100, 16)[1:])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
