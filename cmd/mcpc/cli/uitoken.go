package cli

import (
	"fmt"
	"path/filepath"

	"github.com/mcpc-dev/mcpc/internal/private"
)

// The access token mcpc ui makes when no --token-env gives one is printed
// once as the page's address with ?token=, and kept while mcpc ui runs in
// ui-<port>.token (0600) of the user's runtime directory, the one mcpc run
// keeps its tokens and status sockets in (private.Dir: the user's own,
// closed to others, else refused).

// writeUIToken writes tok to the token file of the page on port,
// atomically (a stale file of an earlier mcpc ui is replaced). It returns
// the file's path and a function that removes it if it still holds tok.
func writeUIToken(port int, tok string) (string, func(), error) {
	dir, err := private.Dir(true)
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, fmt.Sprintf("ui-%d.token", port))
	if err := private.WriteToken(path, tok); err != nil {
		return "", nil, err
	}
	return path, func() { private.RemoveToken(path, tok) }, nil
}
