package craftbot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// CraftBot reads mcp_config.json with Python's json.load, which recurses
// once per level and raises RecursionError near 1000 levels; CraftBot
// catches it and loads no server. mcpc reads up to 900 levels (its bound
// was 100, so a file CraftBot loads was refused) and refuses more, at the
// first bracket too deep, saying what CraftBot does.
func TestConfigNestsAtMost900Levels(t *testing.T) {
	text := func(levels int) string { // {"mcp_servers": [{"extra": [...]}]}
		arrays := levels - 3
		return `{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "x", "extra": ` + strings.Repeat("[", arrays) + strings.Repeat("]", arrays) + `}]}`
	}
	cfg, ds := check(t, text(900), Options{})
	if len(cfg.Entries) != 1 || !cfg.Entries[0].Loads() {
		t.Errorf("900 levels: the entry does not load: %v", ds)
	}
	for _, d := range ds {
		if d.Rule == rules.JSONSyntax.ID {
			t.Errorf("900 levels refused: %v", d)
		}
	}
	src := text(901)
	cfg, ds = check(t, src, Options{})
	col := strings.Index(src, "[[") + 1 + 901 - 3 - 1
	want := fmt.Sprintf("mcp_config.json:1:%d invalid JSON: nested deeper than 900 levels, which CraftBot's Python json.load cannot read (it stops near 1000 levels, Python's recursion limit, with RecursionError): "+loadsNothing, col)
	if len(ds) != 1 || ds[0].Rule != rules.JSONSyntax.ID || ds[0].Pos().String()+" "+ds[0].Message != want || len(cfg.Entries) != 0 {
		t.Errorf("901 levels: %v\nwant %s", ds, want)
	}
}

// What Check allocates for a value nested n levels grows as n does: the
// place a repeated key is reported at was written out at every level of
// every value (800 levels cost 800² bytes each).
func TestDeepValuesCostTheirDepth(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocations")
	}
	allocated := func(levels int) uint64 {
		src := []byte(`{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "x", "extra": ` + strings.Repeat("[", levels) + strings.Repeat("]", levels) + `}]}`)
		return testservers.AllocatedBytes(func() {
			if _, _, err := Check("mcp_config.json", src, Options{}); err != nil {
				t.Fatal(err)
			}
		})
	}
	allocated(10) // the schemas compiled
	a1, a2 := allocated(400), allocated(800)
	t.Logf("%d bytes for 400 levels, %d for 800", a1, a2)
	if a2 > 3*a1 {
		t.Errorf("%d bytes allocated for 400 levels, %d for 800: want about twice", a1, a2)
	}
}
