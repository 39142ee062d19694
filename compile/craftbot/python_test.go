package craftbot

import (
	"testing"

	"github.com/mcpc-dev/mcpc/internal/node"
)

// Python's str() and bool() of what json.load gives, as python3 printed
// them for each literal (str(json.loads(lit)), bool(json.loads(lit))).
func TestPyStrAndTruthy(t *testing.T) {
	for _, c := range []struct {
		lit, str string
		truthy   bool
	}{
		{"42", "42", true}, {"-0", "0", false}, {"1.0", "1.0", true}, {"1e16", "1e+16", true},
		{"1e-5", "1e-05", true}, {"0.0001", "0.0001", true}, {"123456789012345678.0", "1.2345678901234568e+17", true},
		{"1E400", "inf", true}, {"-0.0", "-0.0", false}, {"2.5e-7", "2.5e-07", true},
		{"12345678901234567890", "12345678901234567890", true}, {"1e15", "1000000000000000.0", true}, {"0.1", "0.1", true},
		{"null", "None", false}, {"true", "True", true}, {`""`, "", false}, {`"false"`, "false", true},
		{`[]`, "[]", false}, {`{}`, "{}", false},
		{`["a", 1, null, true, {"k": "it's"}]`, `['a', 1, None, True, {'k': "it's"}]`, true},
	} {
		n := &node.Node{Kind: node.Number, Text: c.lit} // 1E400 too, which mcpc's parser refuses
		if c.lit[0] != '-' && (c.lit[0] < '0' || c.lit[0] > '9') {
			n = mustParse(c.lit)
		}
		if got := pyStr(n); got != c.str {
			t.Errorf("str(%s) = %q, want %q", c.lit, got, c.str)
		}
		if got := truthy(n); got != c.truthy {
			t.Errorf("bool(%s) = %v, want %v", c.lit, got, c.truthy)
		}
	}
}
