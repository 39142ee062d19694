package node

import "bytes"

// Python's json module reads three more number literals than JSON has:
// NaN, Infinity and -Infinity (json.load's parse_constant), and it reads a
// number no float64 holds (1e400 is inf, a 400-digit integer an int).
// A file its reader is Python's (Nesting.Python) may hold them; they are
// read as Number nodes whose Text is the literal as written.

// pyConstants are the literals, each with a JSON number of its length that
// stands in for it while the text is parsed.
var pyConstants = []struct{ lit, stand []byte }{
	{[]byte("-Infinity"), []byte("-10000000")},
	{[]byte("Infinity"), []byte("10000000")},
	{[]byte("NaN"), []byte("1e0")},
}

// standInPyConstants returns data with every NaN, Infinity and -Infinity
// outside strings replaced by a JSON number of the same length (so that
// every offset stays), and the literal at each replaced offset; data
// itself when there is none.
func standInPyConstants(data []byte) ([]byte, map[int32]string) {
	if bytes.IndexAny(data, "NI") < 0 {
		return data, nil
	}
	var out []byte
	var lits map[int32]string
	outsideStrings(data, false, "NI", func(i int, c byte) bool {
		if c != 'N' && c != 'I' {
			return true
		}
		if c == 'I' && i > 0 && data[i-1] == '-' {
			i-- // -Infinity
		}
		for _, k := range pyConstants {
			if bytes.HasPrefix(data[i:], k.lit) {
				if out == nil {
					out = append([]byte(nil), data...)
					lits = map[int32]string{}
				}
				copy(out[i:], k.stand)
				lits[int32(i)] = string(k.lit)
				break
			}
		}
		return true
	})
	if out == nil {
		return data, nil
	}
	return out, lits
}

// restorePyConstants gives the Number nodes at the offsets of lits their
// literal back.
func restorePyConstants(n *Node, lits map[int32]string) {
	switch n.Kind {
	case Number:
		if lit, ok := lits[n.Start]; ok {
			n.Text = lit
		}
	case Array:
		for _, e := range n.Elems {
			restorePyConstants(e, lits)
		}
	case Object:
		for i := range n.Members {
			restorePyConstants(n.Members[i].Value, lits)
		}
	}
}
