package toolreport_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
	"github.com/mcpc-dev/mcpc/runtime/toolreport"
)

const (
	hostSecret = "CANARY-toolreport-secret-77c1"
	remoteKey  = "CANARY-toolreport-key-19ab"
)

// addEntry seals the entry s with headers for scope and saves it in the
// servers.json of ws, as `mcpc remote add` does.
func addEntry(t *testing.T, ws, scope string, s remote.Server, headers remote.Headers) {
	t.Helper()
	key, err := remote.NewKey(hostSecret)
	if err != nil {
		t.Fatal(err)
	}
	f, err := remote.Load(ws)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := key.Seal(scope, s, headers)
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.WithEntry(s, sealed)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteFile(ws, f.Data, data, f.Exists); err != nil {
		t.Fatal(err)
	}
}

// The remote servers of a chat are connected as the chat connects them,
// their allowed tools named after the stdio tools; an unreachable server is
// server-start-failed at its entry, an entry of another chat remote-sealed,
// an allowlisted tool the server does not offer remote-tool-missing.
func TestMakeWithRemoteServers(t *testing.T) {
	ws := t.TempDir()
	notes := remotetest.Start(t, remotetest.Options{Transport: "http", Token: remoteKey})
	locked := remotetest.Start(t, remotetest.Options{Transport: "sse", Token: remoteKey})
	bearer, err := remote.Bearer(remoteKey)
	if err != nil {
		t.Fatal(err)
	}
	addEntry(t, ws, "chat-1", remote.Server{Name: "notes", URL: notes.URL, Transport: remote.TransportAuto, Tools: []string{"echo", "whoami", "nope"}, Auth: remote.AuthHeaders}, bearer)
	addEntry(t, ws, "chat-1", remote.Server{Name: "locked", URL: locked.URL, Transport: remote.TransportAuto, Auth: remote.AuthHeaders}, remote.Headers{})
	addEntry(t, ws, "chat-2", remote.Server{Name: "other", URL: notes.URL, Transport: remote.TransportAuto, Auth: remote.AuthHeaders}, bearer)

	// A stdio tool named like a remote one: the stdio tool wins.
	srv := server("srv", 3, "-tools", "echo")
	srv.ToolPrefix = "notes__"
	o := options(srv)
	o.Env = runtime.EnvFromList([]string{remote.SecretVar + "=" + hostSecret}, nil)
	o.Remote = &toolreport.Remote{Workspace: ws, Scope: "chat-1"}
	var watched []string
	o.Watch = toolreport.Watch{
		Connecting:   func(path string, n int) { watched = append(watched, fmt.Sprint("connecting ", n, " of ", path)) },
		RemoteServer: func(name, status string) { watched = append(watched, name+": "+status) },
	}
	rep, err := toolreport.Make(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "rows", rowsOf(rep.Rows), []string{
		"srv echo notes__echo -",
		"notes echo - tool-name-collision",
		"notes whoami notes__whoami -",
		"locked - - server-start-failed",
	})
	same(t, "diagnostics", diagsOf(rep.Diagnostics), []string{
		"servers.json:4 warning remote-tool-missing",
		"servers.json:4 warning tool-name-collision",
		"servers.json:5 error server-start-failed",
		"servers.json:6 error remote-sealed",
	})
	same(t, "progress", watched, []string{
		"connecting 2 of " + remote.Path(ws),
		"notes: connected · 2 tools",
		"locked: unavailable: 401 (Unauthorized)",
	})
	if rep.RemoteServers != 2 || rep.Visible() != 2 || rep.Sources == nil {
		t.Errorf("remote servers %d, visible %d, sources %v", rep.RemoteServers, rep.Visible(), rep.Sources)
	}
	if text := fmt.Sprintf("%+v %+v", rowsOf(rep.Rows), rep.Diagnostics); strings.Contains(text, remoteKey) || strings.Contains(text, hostSecret) {
		t.Errorf("the report holds a key: %s", text)
	}
	if notes.Calls("whoami") != 0 {
		t.Error("Make called a tool")
	}

	// Without the host secret no entry opens: each valid one says why.
	o.Env = runtime.EnvFromList(nil, nil)
	o.Watch = toolreport.Watch{}
	rep, err = toolreport.Make(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "diagnostics without the secret", diagsOf(rep.Diagnostics), []string{
		"servers.json:4 error remote-sealed",
		"servers.json:5 error remote-sealed",
		"servers.json:6 error remote-sealed",
	})
	if rep.Visible() != 1 || !strings.Contains(rep.Diagnostics[0].Message, "the host environment has no "+remote.SecretVar) {
		t.Errorf("without the secret: %v", rep.Diagnostics)
	}
}

// A workspace without servers.json adds nothing; one whose servers.json
// cannot be read is an input error, named without secrets.
func TestMakeWithoutAUsableServersJSON(t *testing.T) {
	ws := t.TempDir()
	o := options(server("srv", 3, "-tools", "echo"))
	o.Remote = &toolreport.Remote{Workspace: ws, Scope: "s"}
	var missing string
	o.Watch.NoRemoteFile = func(path string) { missing = path }
	rep, err := toolreport.Make(context.Background(), o)
	if err != nil || missing != remote.Path(ws) || len(rep.Rows) != 1 || rep.RemoteServers != 0 || rep.Sources != nil {
		t.Fatalf("no servers.json: %v, %q, %v", err, missing, rep)
	}

	// servers.json is a link: it is never followed.
	if err := os.MkdirAll(filepath.Dir(remote.Path(ws)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "elsewhere.json"), remote.Path(ws)); err != nil {
		t.Fatal(err)
	}
	_, err = toolreport.Make(context.Background(), o)
	var ie *toolreport.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "servers.json") {
		t.Errorf("a linked servers.json: %v", err)
	}
}
