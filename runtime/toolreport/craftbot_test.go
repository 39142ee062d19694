package toolreport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/policies/toollock"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
	"github.com/mcpc-dev/mcpc/runtime/toolreport"
	"github.com/mcpc-dev/mcpc/schema"
)

// cbServer is a craftbot plan entry, defined at line of mcp_config.json.
func cbServer(name, transport string, line int, args ...string) plan.Server {
	s := plan.Server{Name: name, Transport: transport, Enabled: true, ActionSet: "mcp_" + name, Args: args, Env: map[string]*string{},
		Origin: plan.Origin{Path: "mcp_config.json", Line: line, Column: 5, Source: "config"}}
	if transport == "stdio" {
		s.Command = testServer
	}
	return s
}

// withConfigRef gives s the env key, a reference to the config file.
func withConfigRef(s plan.Server, keys ...string) plan.Server {
	for _, k := range keys {
		ref := plan.ConfigRef(k)
		s.Env[k] = &ref
	}
	return s
}

func cbOptions(config map[string]map[string]string, servers ...plan.Server) toolreport.Options {
	return toolreport.Options{Plan: &plan.Plan{Profile: plan.ProfileCraftbot, Servers: servers},
		Env: runtime.EnvFromList(nil, nil),
		Config: func(server, key string) (string, bool) {
			v, ok := config[server][key]
			return v, ok
		}}
}

// actionsOf shows each row as "server transport tool action set rule".
func actionsOf(rows []toolreport.ActionRow) []string {
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s %s %s %s %s %s", r.Server, r.Transport, str(r.Tool), str(r.Action), r.ActionSet, str(r.Rule)))
	}
	return out
}

// Every enabled server of a craftbot plan: stdio started with its env read
// from the config file, exactly; sse and websocket connected to; a failed
// server a row and an error. The config values
// appear in no row and no diagnostic.
func TestMakeCraftbotActions(t *testing.T) {
	const canary = `CANARY-cb-"q"-${env:HOME}-9f3e71`
	const multi = "line one\n  line two ${workspace} "
	envOut := filepath.Join(t.TempDir(), "env.json")
	sse := remotetest.Start(t, remotetest.Options{Transport: "sse", Tools: []string{"search"},
		Schema: map[string]any{"type": "object", "properties": map[string]any{
			"q":    map[string]any{"type": "string", "description": "query", "default": "all"},
			"opts": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}},
		}, "required": []any{"q"}}})
	fs := withConfigRef(cbServer("fs", "stdio", 3, "-tools", "echo", "-env-out", envOut, "-tool-desc", "uses "+canary), "TOKEN", "MULTI")
	empty := ""
	fs.Env["EMPTY"] = &empty
	leaky := withConfigRef(cbServer("leaky", "stdio", 4, "-exit-at-start", "1", "-stderr", "auth failed for "+canary), "TOKEN")
	remoteSrv := cbServer("search", "sse", 5)
	remoteSrv.URL, remoteSrv.ActionSet = sse.URL+"?key=k", "research"
	gone := cbServer("gone", "sse", 6)
	gone.URL = remotetest.Refused(t)
	ws := cbServer("ws", "websocket", 7)
	ws.URL = "ws://" + testservers.StartWSServer(t) + "/ws?token=t"
	wsGone := cbServer("wsgone", "websocket", 9)
	wsGone.URL = strings.Replace(remotetest.Refused(t), "http://", "ws://", 1) + "?token=t"
	off := cbServer("off", "stdio", 8, "-tools", "echo")
	off.Enabled = false
	o := cbOptions(map[string]map[string]string{"fs": {"TOKEN": canary, "MULTI": multi}, "leaky": {"TOKEN": canary}},
		fs, leaky, remoteSrv, gone, ws, off, wsGone)
	rep, err := toolreport.Make(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "rows", actionsOf(rep.Actions), []string{
		"fs stdio echo mcp_fs_echo mcp_fs -",
		"leaky stdio - - mcp_leaky server-start-failed",
		"search sse drop mcp_search_drop research -",
		"search sse echo mcp_search_echo research -",
		"search sse fail mcp_search_fail research -",
		"search sse search mcp_search_search research -",
		"search sse slow mcp_search_slow research -",
		"search sse whoami mcp_search_whoami research -",
		"gone sse - - mcp_gone server-start-failed",
		"ws websocket big mcp_ws_big mcp_ws -",
		"ws websocket binary mcp_ws_binary mcp_ws -",
		"ws websocket cancelled mcp_ws_cancelled mcp_ws -",
		"ws websocket close mcp_ws_close mcp_ws -",
		"ws websocket drop mcp_ws_drop mcp_ws -",
		"ws websocket echo mcp_ws_echo mcp_ws -",
		"ws websocket flood-pings mcp_ws_flood-pings mcp_ws -",
		"ws websocket garbage mcp_ws_garbage mcp_ws -",
		"ws websocket header mcp_ws_header mcp_ws -",
		"ws websocket pings mcp_ws_pings mcp_ws -",
		"ws websocket slow mcp_ws_slow mcp_ws -",
		"ws websocket slow-running mcp_ws_slow-running mcp_ws -",
		"wsgone websocket - - mcp_wsgone server-start-failed",
	})
	same(t, "diagnostics", diagsOf(rep.Diagnostics), []string{
		"mcp_config.json:4 error server-start-failed",
		"mcp_config.json:6 error server-start-failed",
		"mcp_config.json:9 error server-start-failed",
	})
	if rep.Servers != 6 || rep.Visible() != 19 {
		t.Errorf("servers %d, visible %d", rep.Servers, rep.Visible())
	}

	// The env the server got: the host's (none here), and the config's
	// values exactly as written.
	b, err := os.ReadFile(envOut)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	slices.Sort(env)
	same(t, "the env of fs", env, []string{"EMPTY=", "MULTI=" + multi, "TOKEN=" + canary})

	// The translated schema of an sse tool.
	for _, r := range rep.Actions {
		if r.Tool != nil && *r.Tool == "search" {
			in, _ := json.Marshal(r.Input)
			if string(in) != `{"fields":[{"name":"opts","type":"object","required":false,"dropped":["properties"]},{"name":"q","type":"string","description":"query","required":true,"example":"all"}]}` {
				t.Errorf("search input: %s", in)
			}
		}
	}

	// No secret in any output; the url's query neither.
	var text strings.Builder
	for _, r := range rep.Actions {
		fmt.Fprintf(&text, "%s %s\n", r.Description, r.Message)
	}
	for _, d := range rep.Diagnostics {
		fmt.Fprintf(&text, "%s %s\n", rep.Redact(d.Message), rep.Redact(d.Suggestion))
	}
	for _, leak := range []string{canary, "line two", "token=t", "key=k"} {
		if strings.Contains(text.String(), leak) {
			t.Errorf("output holds %q:\n%s", leak, text.String())
		}
	}
	for _, want := range []string{"[REDACTED]", "[MCP:ws] returns text", "websocket ws://127.0.0.1:", "sse http://127.0.0.1:"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, text.String())
		}
	}
}

// A value the plan refers to that the config file no longer has fails
// that server, saying which key.
func TestMakeCraftbotConfigValueGone(t *testing.T) {
	o := cbOptions(nil, withConfigRef(cbServer("fs", "stdio", 3, "-tools", "echo"), "TOKEN"))
	rep, err := toolreport.Make(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Actions) != 1 || rep.Actions[0].Rule == nil || !strings.Contains(rep.Actions[0].Message, "env TOKEN") {
		t.Errorf("%+v", rep.Actions)
	}
}

// The lock of a craftbot report: action names as visible names, an sse
// server's url without its query; --check finds a changed tool list.
func TestLockOfACraftbotReport(t *testing.T) {
	ctx := context.Background()
	sse := remotetest.Start(t, remotetest.Options{Transport: "sse"})
	remoteSrv := cbServer("search", "sse", 4)
	remoteSrv.URL = sse.URL + "?key=secret-in-query"
	rep, err := toolreport.Make(ctx, cbOptions(nil, cbServer("fs", "stdio", 3, "-tools", "echo"), remoteSrv))
	if err != nil {
		t.Fatal(err)
	}
	out, ds, err := rep.Lock("mcpc.lock.json", nil)
	if err != nil || len(ds) != 0 {
		t.Fatalf("lock: %v %v", ds, err)
	}
	for _, want := range []string{`"visibleName": "mcp_fs_echo"`, `"url": "` + sse.URL + `"`, `"visibleName": "mcp_search_whoami"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("lock lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "secret-in-query") {
		t.Errorf("lock holds the url's query:\n%s", out)
	}
	v, err := schema.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer schema.Release(v)
	lock, lds := toollock.Read("mcpc.lock.json", out, v)
	if lock == nil {
		t.Fatalf("the lock does not read back: %v", lds)
	}
	if _, ds, _ := rep.Lock("mcpc.lock.json", lock); len(ds) != 0 {
		t.Errorf("check of the same tools: %v", ds)
	}
	moved := remotetest.Start(t, remotetest.Options{Transport: "sse", Tools: []string{"extra"}})
	remoteSrv.URL = moved.URL
	changed, err := toolreport.Make(ctx, cbOptions(nil, cbServer("fs", "stdio", 3, "-tools", "echo"), remoteSrv))
	if err != nil {
		t.Fatal(err)
	}
	_, ds, _ = changed.Lock("mcpc.lock.json", lock)
	msgs := fmt.Sprint(ds)
	if !strings.Contains(msgs, `server "search": tool "extra" is new`) || !strings.Contains(msgs, `server "search": the url changed`) {
		t.Errorf("check: %s", msgs)
	}
}
