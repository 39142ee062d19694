package volcanic

import (
	"runtime"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// A compilation holds what its Result needs and little more: each server
// entry's tree packed once it is checked, the plan, the host variables
// (figures: docs/performance.md).
func TestCompileHoldsLittlePerServer(t *testing.T) {
	if testservers.RaceEnabled() {
		t.Skip("the race detector changes allocations")
	}
	const n = 20000
	opts, _ := deploymentShaped(n, layout{minified: true})
	if _, err := compile.Compile(opts); err != nil { // schemas compiled, pools filled
		t.Fatal(err)
	}
	var res *compile.Result
	held := liveBytes(func() {
		var err error
		if res, err = compile.Compile(opts); err != nil {
			t.Fatal(err)
		}
	})
	if res.Plan == nil || len(res.Plan.Servers) != n+1 {
		t.Fatalf("plan: %v", res.Diagnostics)
	}
	runtime.KeepAlive(res)
	t.Logf("%d bytes held per server", held/n)
	if per := held / n; per > heldPerServer {
		t.Errorf("a compilation of %d servers holds %d bytes per server, want at most %d", n, per, heldPerServer)
	}
}

const heldPerServer = 1600

// liveBytes is how much more the heap holds, after a collection, once f
// has run than before.
func liveBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// What the layers set below a server is added when the server is bound,
// not when the layer is read: until then the configuration holds the
// server's node and what adds its parts, in layer order. Other sections
// are added at once.
func TestServerPartsWaitForTheirServer(t *testing.T) {
	c := newConfig()
	root, src, d := node.ParseJSONSource("a.json", []byte(`{"Mcp": {"Servers": {"a": {"Command": "x", "Args": ["1"]}, "b:Command": "y"}, "Other": {"k": "v"}}}`), true)
	if d != nil || src == nil {
		t.Fatal(d)
	}
	c.addJSON(root, src, 0)
	env, _, _, err := compile.LoadHostEnv(compile.HostEnvOptions{CleanEnv: true, Env: []string{"Mcp__Servers__c__Command=z", "Mcp__Servers__a__Env__K=v", "Mcp__Servers__a__Command=env"}})
	if err != nil {
		t.Fatal(err)
	}
	vars := env.Layers()[0]
	c.addEnv(vars, 1)
	servers := c.lookup("Mcp", "Servers")
	if servers == nil || len(servers.order) != 3 {
		t.Fatalf("servers: %+v", servers)
	}
	for _, sn := range servers.order {
		if len(sn.order) != 0 || len(c.pending[sn]) == 0 {
			t.Errorf("server %s has %d keys and %d parts waiting before it is bound", sn.key, len(sn.order), len(c.pending[sn]))
		}
	}
	if c.lookup("Mcp", "Other", "k") == nil {
		t.Error("Mcp:Other:k waits too")
	}
	a := c.lookup("Mcp", "Servers", "a")
	c.expand(a)
	if len(c.pending[a]) != 0 {
		t.Error("a's parts are still waiting")
	}
	cmd := c.lookup("Mcp", "Servers", "a", "Command")
	if cmd == nil || len(cmd.entries) != 2 || cmd.winner().value != "env" || cmd.entries[0].value != "x" {
		t.Fatalf("a:Command %+v", cmd)
	}
	if env := c.lookup("Mcp", "Servers", "a", "Env", "K"); env == nil || env.winner().envName != "Mcp__Servers__a__Env__K" {
		t.Errorf("a:Env:K %+v", env)
	}
	if b := c.lookup("Mcp", "Servers", "b"); len(b.order) != 0 {
		t.Error("b was expanded with a")
	}
}
