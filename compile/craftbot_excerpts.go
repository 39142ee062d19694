package compile

import (
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/internal/diag"
)

// ConfigExcerpts returns the lines of data, an mcp_config.json (or a piece
// of one, such as the JSON of `mcpc config add-json`) named file in
// diagnostics, for excerpts: every value of env and of an unknown field
// shows as [REDACTED], by its span, as in validate's excerpts. A byte order
// mark is dropped, as positions count from after it.
func ConfigExcerpts(file string, data []byte) diag.Sources {
	data = craftbot.Text(data)
	fs := newFileSet()
	fs.add(file, data)
	hidden := craftbot.SecretSpans(data)
	spans := make([]span, len(hidden))
	for i, s := range hidden {
		spans[i] = span{s.Start, s.End}
	}
	fs.hide(file, spans)
	return fs
}
