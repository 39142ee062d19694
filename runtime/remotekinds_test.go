package runtime

import (
	"testing"

	"github.com/mcpc-dev/mcpc/runtime/remoteset"
)

// A remote call's error kind becomes the chat's by its text (chatRemote's
// call): each kind of a remote set must be one of the chat's, with the
// same meaning.
func TestRemoteCallErrorKindsAreTheChats(t *testing.T) {
	for remote, chat := range map[remoteset.CallErrorKind]CallErrorKind{
		remoteset.CallTimeout:     CallTimeout,
		remoteset.CallCancelled:   CallCancelled,
		remoteset.CallServerError: CallServerError,
		remoteset.CallUnavailable: CallUnavailable,
	} {
		if CallErrorKind(remote) != chat {
			t.Errorf("remote kind %q becomes %q, want %q", remote, CallErrorKind(remote), chat)
		}
	}
}
