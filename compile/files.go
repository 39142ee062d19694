package compile

import (
	"github.com/mcpc-dev/mcpc/compile/node"
)

// FileSet keeps the text of every input read, so that printers can show the
// line under a diagnostic. It implements diag.Sources; every line it returns
// has known secret values redacted.
type FileSet struct {
	files    map[string]*node.LineIndex
	pseudo   map[string][]string
	redactor *Redactor
}

func newFileSet() *FileSet {
	return &FileSet{files: map[string]*node.LineIndex{}, pseudo: map[string][]string{}}
}

func (fs *FileSet) add(path string, data []byte) { fs.files[path] = node.NewLineIndex(path, data) }

func (fs *FileSet) addPseudo(path string, lines []string) { fs.pseudo[path] = lines }

// Line returns line n of file, redacted.
func (fs *FileSet) Line(file string, n int) (string, bool) {
	if fs == nil {
		return "", false
	}
	if ix, ok := fs.files[file]; ok {
		s, ok := ix.Line(n)
		return fs.redactor.Redact(s), ok
	}
	if lines, ok := fs.pseudo[file]; ok && n >= 1 && n <= len(lines) {
		return fs.redactor.Redact(lines[n-1]), true
	}
	return "", false
}
