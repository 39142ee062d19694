package craftbot

import (
	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/diag"
)

// ConfigExcerpts returns the lines of data, an mcp_config.json (or a piece
// of one, such as the JSON of `mcpc config add-json`) named file in
// diagnostics, for excerpts: every value of env and of an unknown field
// shows as [REDACTED], by its span, as in validate's excerpts. A byte order
// mark is dropped, as positions count from after it.
func ConfigExcerpts(file string, data []byte) diag.Sources {
	data = Text(data)
	fs := compile.NewFileSet()
	fs.Add(file, data)
	fs.Hide(file, SecretSpans(data))
	return fs
}
