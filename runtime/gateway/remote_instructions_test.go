package gateway

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/runtime/remote"
)

// refusedURL is the URL of a 127.0.0.1 port that refuses connections.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/mcp"
}

// remoteNotesWorkspace writes ws's servers.json for scope: an entry whose
// sealed part does not open for scope (sealed for another), and a server
// that refuses connections.
func remoteNotesWorkspace(t *testing.T, ws, scope string) {
	t.Helper()
	addRemote(t, ws, "someone-else", remote.Server{Name: "forged", URL: refusedURL(t)}, remote.Headers{})
	addRemote(t, ws, scope, remote.Server{Name: "down", URL: refusedURL(t)}, remote.Headers{})
}

func checkRemoteNotes(t *testing.T, how, instructions string) {
	t.Helper()
	for _, want := range []string{
		"Remote MCP servers\n",
		"- down is unavailable: ",
		"- forged in servers.json is skipped: " + remote.NotOpenReason,
	} {
		if !strings.Contains(instructions, want) {
			t.Errorf("%s: the first initialize's instructions lack %q:\n%s", how, want, instructions)
		}
	}
}

// The first session of a chat gets the notes on its unavailable and
// skipped remote servers in its initialize instructions: initialize waits
// for the chat's remote connects, over stdio and over HTTP.
func TestRemoteNotesInTheFirstInstructions(t *testing.T) {
	t.Parallel()
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		marker := noLeaks(t)
		ws := t.TempDir()
		remoteNotesWorkspace(t, ws, "c1")
		h := remoteHost(t, marker, nil, nil)
		gw := NewGateway(h, GatewayOptions{Version: "test"})
		t.Cleanup(gw.Close)
		chat, err := h.ChatWithScope("stdio", ws, "c1")
		if err != nil {
			t.Fatal(err)
		}
		cs := connectInMemory(t, gw, chat, nil)
		checkRemoteNotes(t, "stdio", cs.InitializeResult().Instructions)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		marker := noLeaks(t)
		root := t.TempDir()
		ws := filepath.Join(root, "h1")
		if err := os.Mkdir(ws, 0o700); err != nil {
			t.Fatal(err)
		}
		remoteNotesWorkspace(t, ws, "h1")
		h := remoteHost(t, marker, nil, nil)
		gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root})
		base, client := httpGateway(t, gw)
		cs := connectHTTP(t, client, base+"/chats/h1/mcp")
		checkRemoteNotes(t, "http", cs.InitializeResult().Instructions)
	})
}
