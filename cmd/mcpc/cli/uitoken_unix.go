//go:build unix

package cli

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// notPrivate says why a directory for secrets is not its owner's alone
// ("" when it is): another user owns it, or others may enter it.
func notPrivate(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return "has no owner to check"
	case int(st.Uid) != os.Geteuid():
		return fmt.Sprintf("belongs to another user (uid %d): refused", st.Uid)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Sprintf("may be entered by others (%v): chmod 700 it", fi.Mode().Perm())
	}
	return ""
}

// othersMayReplace says why a directory lets another user replace what
// is in it ("" when it does not): it belongs to someone other than this
// user or root, or others may write to it and it is not sticky.
func othersMayReplace(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return "has no owner to check"
	case !fi.IsDir():
		return "is not a directory"
	case int(st.Uid) != os.Geteuid() && st.Uid != 0:
		return fmt.Sprintf("belongs to another user (uid %d): refused", st.Uid)
	case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0:
		return fmt.Sprintf("may be written to by others (%v): refused", fi.Mode().Perm())
	}
	return ""
}
