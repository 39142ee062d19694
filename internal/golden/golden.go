// Package golden is the golden-file check of mcpc's tests and their one
// -update flag: `go test ./PKG -update` rewrites the files that PKG's
// tests compare their output with (and whatever else a test records or
// generates under that flag); read the diff before committing it.
//
// Only tests import it; it imports no package of mcpc.
package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Update is the -update flag of every test binary that imports golden.
var Update = flag.Bool("update", false, "rewrite the golden files (and what the tests record or generate) instead of comparing with them")

// Compare fails t when got differs from the file at path; with -update
// it writes got there instead (making its directory).
func Compare(t testing.TB, path, got string) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run the test with -update to rewrite it, and read the diff): %s", path, firstDifference(string(want), got))
	}
}

// firstDifference shows the first line where got differs from want.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\nwant %s\ngot  %s", i+1, wl, gl)
		}
	}
	return ""
}
