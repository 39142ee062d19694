//go:build !unix

package cli

import "io/fs"

// notPrivate: where there are no Unix owners and modes (Windows), the
// user's cache directory is the user's by its access list.
func notPrivate(fs.FileInfo) string { return "" }

// othersMayReplace: as notPrivate.
func othersMayReplace(fi fs.FileInfo) string {
	if !fi.IsDir() {
		return "is not a directory"
	}
	return ""
}
