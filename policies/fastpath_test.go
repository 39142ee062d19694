package policies

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// The shipped packs stay within what the fast path understands: a construct
// outside it would leave every lint to CUE, slowly but correctly.
func TestShippedPacksHaveAFastPath(t *testing.T) {
	packs, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range packs {
		if err := p.FastPathError(); err != nil {
			t.Errorf("pack %s: %v", p.Name, err)
		}
	}
}

// The shipped packs' declarations are read from their fast path, as CUE
// reads them, without compiling the packs: a lint that CUE does not need
// compiles nothing of them.
func TestShippedPacksDeclareAsCUEDoes(t *testing.T) {
	packs, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	taken := builtinRuleIDs()
	for _, p := range packs {
		viaCUE, ds := loadFS(builtin, p.Name, p.Name, taken, false)
		if len(ds) > 0 {
			t.Fatalf("pack %s: %v", p.Name, ds)
		}
		if !reflect.DeepEqual(p.Rules(), viaCUE.Rules()) {
			t.Errorf("pack %s declares\n%v\nCUE reads\n%v", p.Name, p.Rules(), viaCUE.Rules())
		}
	}
	fresh := builtinRuleIDs()
	for _, name := range BuiltinNames {
		p, ds := loadFS(builtin, name, name, fresh, true)
		if len(ds) > 0 || p.built {
			t.Errorf("pack %s: loading it compiled its CUE (%v)", name, ds)
		}
	}
}

// holdToCUE turns the cross-check on: each rule the fast path decides is
// evaluated by CUE as well, and the violations must be equal, byte for
// byte; CUE must find nothing wrong with a rule the fast path decided. done
// turns it off, reports the differences and returns how many evaluations
// the fast path decided wholly, and how many it left in part to CUE.
func holdToCUE(t testing.TB) (done func() (decided, left int)) {
	var mu sync.Mutex
	var diffs []string
	decided, left := 0, 0
	restore := SetCrossCheck(func(c CrossCheck) {
		mu.Lock()
		defer mu.Unlock()
		if len(c.LeftToCUE) == 0 {
			decided++
		} else {
			left++
		}
		if (!reflect.DeepEqual(c.Fast, c.ViaCUE) || len(c.CUEDiagnostics) > 0) && len(diffs) < 3 {
			plan := string(c.PlanJSON)
			if len(plan) > 2000 {
				plan = plan[:2000] + "…"
			}
			diffs = append(diffs, fmt.Sprintf("pack %s on %s:\n fast path %v\n CUE       %v %v", c.Pack, plan, c.Fast, c.ViaCUE, c.CUEDiagnostics))
		}
	})
	return func() (int, int) {
		restore()
		mu.Lock()
		defer mu.Unlock()
		for _, d := range diffs {
			t.Error(d)
		}
		return decided, left
	}
}

// genPlan is a plan of a seeded random deployment, from the values the
// shipped packs look at: launchers and their arguments, pinned and not,
// sealing keys in env, null values, disabled and remote servers.
func genPlan(r *rand.Rand) []byte {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	commands := []string{"npx", "/usr/bin/npx", "bunx", "pnpx", "uvx", "/opt/uvx", "pipx", "docker", "/usr/local/bin/docker", "node", "python3", "./run.sh", "cmd", ""}
	argPool := []string{"-y", "--yes", "-p", "--from", "--spec", "run", "--rm", "-i", "-e", "FOO=1", "--env", "-v", "/a:/b", "--name", "x",
		"@scope/pkg", "@scope/pkg@1.2.3", "@scope/pkg@latest", "pkg@^1.2", "pkg@1.2.3-beta.1", "pkg@v1.0.0", "./local", "/abs/path",
		"mcp-server", "mcp-server==1.0", "mcp-server@1.0", "ghcr.io/org/img", "ghcr.io/org/img:1.2", "img:latest", "img@sha256:abc",
		"localhost:5000/img", "--", "${workspace}", "é\"\\u00e9", "-"}
	n := r.IntN(30)
	if r.IntN(4) == 0 {
		n = 18 + r.IntN(6) // around server-count-max's limit
	}
	servers := []map[string]any{}
	for i := 0; i < n; i++ {
		args := []string{}
		for j := r.IntN(6); j > 0; j-- {
			args = append(args, pick(argPool...))
		}
		env := map[string]any{}
		for j := r.IntN(4); j > 0; j-- {
			switch r.IntN(5) {
			case 0:
				env[pick("TOKEN", "KEY", "A_B")] = nil
			case 1:
				env[pick("TOKEN", "SECRET", "X")] = pick("${env:TELEGRAM_BOT_TOKEN}", "pre-${env:MCP_ENCRYPTION_SECRET}-post", "${env:TELEGRAM_BOT_TOKEN}${env:MCP_ENCRYPTION_SECRET}")
			default:
				env[pick("LOG", "REGION", "HOME_DIR")] = pick("info", "${workspace}", "${env:OTHER}", "")
			}
		}
		s := server(fmt.Sprintf("s-%d", i), pick(commands...), args...)
		s["env"] = env
		s["enabled"] = r.IntN(5) != 0
		s["transport"] = pick("stdio", "stdio", "stdio", "http")
		s["idleTimeoutSeconds"] = []int{0, 0, 600, 1800}[r.IntN(4)]
		if r.IntN(8) == 0 {
			delete(s, "idleTimeoutSeconds") // as in a craftbot plan
		}
		servers = append(servers, s)
	}
	b, err := json.Marshal(map[string]any{"planVersion": 1, "profile": "volcanic", "servers": servers, "shadowed": []any{}, "sources": []any{}})
	if err != nil {
		panic(err)
	}
	return b
}

// The fast path finds what CUE finds on generated deployments, and decides
// every rule of the shipped packs on them.
func TestFastPathMatchesCUEOnGeneratedPlans(t *testing.T) {
	done := holdToCUE(t)
	r := rand.New(rand.NewPCG(32, 1))
	found := map[string]int{}
	for i := 0; i < 200; i++ {
		plan := genPlan(r)
		for _, name := range BuiltinNames {
			vs, ds := pack(t, name).Evaluate(plan)
			if len(ds) > 0 {
				t.Fatalf("%s: %v", name, ds)
			}
			for _, v := range vs {
				found[v.Rule]++
			}
		}
	}
	decided, left := done()
	if left > 0 || decided != 400 {
		t.Errorf("the fast path decided %d evaluations wholly, left %d in part to CUE; want every one of 400", decided, left)
	}
	for _, p := range BuiltinNames {
		for _, r := range pack(t, p).Rules() {
			if found[r.ID] == 0 {
				t.Errorf("no generated plan drew a finding of %s", r.ID)
			}
		}
	}
	t.Logf("findings: %v", found)
}

// The fast path on any JSON: where it decides a rule, CUE finds the same.
func FuzzFastPathMatchesCUE(f *testing.F) {
	r := rand.New(rand.NewPCG(32, 2))
	for i := 0; i < 20; i++ {
		f.Add(genPlan(r))
	}
	f.Add([]byte(`{"servers": [{"enabled": true, "transport": "stdio", "command": "npx", "args": [1], "name": "x", "env": {}}]}`))
	f.Add([]byte(`{"servers": [{"enabled": true, "transport": "stdio", "command": "npx", "args": ["a"], "name": "x", "env": {}, "index": 2}]}`))
	f.Fuzz(func(t *testing.T, plan []byte) {
		done := holdToCUE(t)
		for _, name := range BuiltinNames {
			pack(t, name).Evaluate(plan)
		}
		done()
	})
}

// A team pack within the fast path's constructs gets one, and finds what CUE
// finds; one outside them is evaluated by CUE, with the place of the
// construct said.
func TestTeamPackFastPath(t *testing.T) {
	write := func(src string) *Pack {
		dir := filepath.Join(t.TempDir(), "team")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "team.cue"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		p, ds := Load(dir)
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		return p
	}
	understood := write(`package team

import "list"

input: _
launchers: ["npx", "uvx", "docker"]
limits: {timeout: 600}

rules: "team-launcher": {
	severity:    "error"
	description: "Servers start only through an approved launcher."
	example:     "\"command\": \"/tmp/run.sh\""
	deny: [for i, s in input.servers if !list.Contains(launchers, s.command) {
		path:       ["servers", i, "command"]
		message:    "server \(s.name) starts with \(s.command), which is not an approved launcher"
		suggestion: "start it with one of npx, uvx, docker"
	}]
}
rules: "team-timeout": {
	severity:    "warning"
	description: "Calls time out within ten minutes."
	example:     "\"callTimeoutSeconds\": 900"
	deny: [for i, s in input.servers let limit = limits.timeout if s.callTimeoutSeconds > limit {
		path:    ["servers", i, "callTimeoutSeconds"]
		message: "server \(s.name) waits \(s.callTimeoutSeconds - limit) s longer than \(limit) s"
	}]
}
`)
	if err := understood.FastPathError(); err != nil {
		t.Fatalf("the pack has no fast path: %v", err)
	}
	other := write(`package team

input: _
#Limit: <=600

rules: "team-timeout": {
	severity:    "warning"
	description: "Calls time out within ten minutes."
	example:     "\"callTimeoutSeconds\": 900"
	deny: [for i, s in input.servers if (s.callTimeoutSeconds & #Limit) == _|_ {
		path:    ["servers", i, "callTimeoutSeconds"]
		message: "server \(s.name) waits too long"
	}]
}
`)
	if err := other.FastPathError(); err == nil || !strings.Contains(err.Error(), "team.cue:4:") {
		t.Errorf("FastPathError = %v, want the place of #Limit", err)
	}
	done := holdToCUE(t)
	r := rand.New(rand.NewPCG(32, 4))
	found := 0
	for i := 0; i < 50; i++ {
		plan := genPlan(r)
		vs, ds := understood.Evaluate(plan)
		if len(ds) > 0 {
			t.Fatal(ds)
		}
		found += len(vs)
		other.Evaluate(plan)
	}
	decided, left := done()
	if decided != 50 || left != 50 || found == 0 {
		t.Errorf("%d evaluations decided by the fast path, %d left to CUE, %d findings; want 50, 50 (the other pack) and some", decided, left, found)
	}
}
