package volcanic

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// The host reads appsettings files and settings.json with System.Text.Json,
// whose readers refuse objects and arrays nested deeper than 64 levels
// ("The maximum configured depth of 64 has been exceeded"): a file of 65
// levels is a json-syntax error at its 65th opening bracket, and one of 64
// is read. mcpc's own bound was 100, so 65 to 100 levels passed.
func TestHostFilesNestAtMost64Levels(t *testing.T) {
	for _, c := range []struct {
		file string
		// outer is how many objects hold the arrays; text nests arrays
		// below them.
		outer int
		text  func(arrays int) string
	}{
		{"appsettings.json", 4, func(arrays int) string {
			return `{"Mcp": {"Servers": {"a": {"Command": "x", "Extra": ` + strings.Repeat("[", arrays) + strings.Repeat("]", arrays) + `}}}}`
		}},
		{filepath.Join("agent", "settings.json"), 3, func(arrays int) string {
			return `{"mcpServers": {"a": {"command": "x", "extra": ` + strings.Repeat("[", arrays) + strings.Repeat("]", arrays) + `}}}`
		}},
	} {
		for _, levels := range []int{64, 65} {
			text := c.text(levels - c.outer)
			opts := compile.Options{CleanEnv: true, AgentDir: "agent", ReadFile: fakeFS(map[string][]byte{c.file: []byte(text)})}
			if c.file == "appsettings.json" {
				opts.AppSettings = []string{c.file}
			}
			res, err := compile.Compile(opts)
			if err != nil {
				t.Fatal(err)
			}
			var syntax []string
			for _, d := range res.Diagnostics {
				if d.Rule == rules.JSONSyntax.ID {
					syntax = append(syntax, d.Pos().String()+" "+d.Message)
				}
			}
			if levels == 64 {
				if len(syntax) > 0 {
					t.Errorf("%s of 64 levels refused: %v", c.file, syntax)
				}
				continue
			}
			// At the 65th level's bracket.
			col := strings.Index(text, "[") + 1 + 65 - c.outer - 1
			want := fmt.Sprintf(`%s:1:%d invalid JSON: nested deeper than 64 levels, which the host's JSON reader (System.Text.Json) refuses: "The maximum configured depth of 64 has been exceeded"`, c.file, col)
			if len(syntax) != 1 || syntax[0] != want {
				t.Errorf("%s of 65 levels:\n got  %v\n want %s", c.file, syntax, want)
			}
		}
	}
}
