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

	// The input schema of an sse tool, as the host's adapter builds it.
	for _, r := range rep.Actions {
		if r.Tool != nil && *r.Tool == "search" {
			in, _ := json.Marshal(r.Input)
			if string(in) != `{"opts":{"description":"Nested object","type":"object"},"q":{"description":"query","example":"all","required":true,"type":"string"}}` {
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

// What the host's adapter makes of real servers' tools: only the first
// page of a server that pages (cb-tools-paged, with the count the host
// never registers), the description fallbacks, a tool whose name breaks
// the handler's source (not registered, an error) or is escaped (another
// tool called), a server name that breaks every handler (an error when
// enabled, a warning when disabled), a schema the adapter fails on, an
// input named _…; the lock hashes the host's map.
func TestMakeCraftbotAsTheHostsAdapter(t *testing.T) {
	paged := cbServer("paged", "stdio", 3, "-tools", "a,b,c,d,e", "-page-size", "2")
	paged.Description = "Paged things"
	tj := func(name, schema string) string {
		return fmt.Sprintf(`{"name": %q, "description": "", "inputSchema": %s}`, name, schema)
	}
	odd := cbServer("odd", "stdio", 4, "-tools", "",
		"-tool-json", tj(`say "hi"`, `{"type": "object"}`),
		"-tool-json", tj(`a\tb`, `{"type": "object"}`),
		"-tool-json", tj("bad", `{"type": "object", "properties": {"p": "string"}}`),
		"-tool-json", tj("internal", `{"type": "object", "properties": {"_session": {"type": "string"}, "q": {}}, "required": ["_session"]}`),
		"-tool-json", tj("untyped", `{"properties": {"q": {"type": "string"}}}`))
	quoted := cbServer(`my "fs"`, "stdio", 5, "-tools", "echo")
	off := cbServer(`off\n`, "stdio", 6, "-tools", "echo")
	off.Enabled = false
	rep, err := toolreport.Make(context.Background(), cbOptions(nil, paged, odd, quoted, off))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "rows", actionsOf(rep.Actions), []string{
		"paged stdio a mcp_paged_a mcp_paged -",
		"paged stdio b mcp_paged_b mcp_paged -",
		`odd stdio a\tb mcp_odd_a\tb mcp_odd cb-action-escape`, // the SDK lists tools in name order
		"odd stdio bad - mcp_odd cb-action-schema",
		"odd stdio internal mcp_odd_internal mcp_odd cb-action-internal-arg",
		`odd stdio say "hi" - mcp_odd cb-action-name`,
		"odd stdio untyped mcp_odd_untyped mcp_odd -",
		`my "fs" stdio echo - mcp_my "fs" cb-action-name`,
	})
	same(t, "diagnostics", diagsOf(rep.Diagnostics), []string{
		"mcp_config.json:3 warning cb-tools-paged",
		"mcp_config.json:4 error cb-action-escape",
		"mcp_config.json:4 error cb-action-name",
		"mcp_config.json:4 error cb-action-schema",
		"mcp_config.json:4 warning cb-action-internal-arg",
		"mcp_config.json:5 error cb-action-name",
		"mcp_config.json:6 warning cb-action-escape",
	})
	msgs := map[string]string{}
	for _, d := range rep.Diagnostics {
		msgs[fmt.Sprintf("%d %s", d.Line, d.Rule)] = d.Message
	}
	for key, want := range map[string]string{
		"3 cb-tools-paged":         "the first page (2 tools) and never registers the 3 tools of the later pages",
		"4 cb-action-escape":       `calls tool "a\tb", not "a\\tb"`,
		"4 cb-action-internal-arg": `"_session" is required`,
		"5 cb-action-name":         `server "my \"fs\"": the server name holds " (a double quote)`,
		"6 cb-action-escape":       `(the server is disabled)`,
	} {
		if !strings.Contains(msgs[key], want) {
			t.Errorf("%s: %q lacks %q", key, msgs[key], want)
		}
	}
	descs := map[string]string{}
	for _, r := range rep.Actions {
		if r.Action != nil {
			descs[*r.Action] = r.Description
			in, _ := json.Marshal(r.Input)
			descs[*r.Action+" input"] = string(in)
		}
	}
	for action, want := range map[string]string{
		"mcp_paged_a":            "[MCP:paged] answers with its own name",
		"mcp_odd_untyped":        "[MCP:odd] MCP tool: untyped",
		"mcp_odd_untyped input":  "{}",
		"mcp_odd_internal input": `{"_session":{"required":true,"type":"string"},"q":{"type":"string"}}`,
	} {
		if descs[action] != want {
			t.Errorf("%s: %q, want %q", action, descs[action], want)
		}
	}
	// The fallback to the server's description, with a real server's
	// empty description.
	paged = cbServer("paged", "stdio", 3, "-tools", "", "-tool-json", tj("t", `{}`))
	paged.Description = "Paged things"
	rep2, err := toolreport.Make(context.Background(), cbOptions(nil, paged))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep2.Actions) != 1 || rep2.Actions[0].Description != "[MCP:paged] t from Paged things" {
		t.Errorf("%+v", rep2.Actions)
	}

	// The lock hashes the host's map: the schema of internal is its
	// sha256, the unregistered tool's the server's own schema.
	out, _, err := rep.Lock("mcpc.lock.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	mapSum, _ := toollock.SchemaSum(map[string]any{"_session": map[string]any{"required": true, "type": "string"}, "q": map[string]any{"type": "string"}})
	if !strings.Contains(string(out), mapSum) || !strings.Contains(string(out), toollock.Sum("[MCP:odd] MCP tool: internal")) {
		t.Errorf("the lock does not hash the action's input %s and description:\n%s", mapSum, out)
	}
	if strings.Count(string(out), `"name": "`) != 3+2+5+1 || strings.Contains(string(out), `"name": "c"`) {
		t.Errorf("the lock holds a tool of a later page, or lacks one:\n%s", out)
	}
}
