package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is the part of testing.TB that Compare uses.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Compare passes on the same text and names the first differing line
// otherwise; with -update it writes the file, making its directory.
func TestCompare(t *testing.T) {
	given := *Update // the test sets the flag itself, also under go test -update
	defer func() { *Update = given }()
	*Update = false
	path := filepath.Join(t.TempDir(), "a.golden")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	same := &recorder{}
	Compare(same, path, "one\ntwo\nthree\n")
	differs := &recorder{}
	Compare(differs, path, "one\n2\nthree\n")
	if len(same.errs) != 0 || len(differs.errs) != 1 || !strings.HasSuffix(differs.errs[0], "line 2:\nwant two\ngot  2") {
		t.Errorf("same: %q; differs: %q", same.errs, differs.errs)
	}
	*Update = true
	fresh := filepath.Join(t.TempDir(), "new", "b.golden")
	Compare(t, fresh, "written\n")
	if b, err := os.ReadFile(fresh); err != nil || string(b) != "written\n" {
		t.Errorf("-update wrote %q, %v", b, err)
	}
}
