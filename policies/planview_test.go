package policies

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
)

// materialize turns a value of the fast path into plain Go values: objects
// as lists of key and value, in order.
func materialize(v val) any {
	switch v.k {
	case kNull:
		return nil
	case kBool:
		return v.b
	case kInt:
		return v.n
	case kFloat:
		return "float " + v.s
	case kStr:
		return v.s
	case kList:
		out := []any{}
		for _, e := range v.elems() {
			out = append(out, materialize(e))
		}
		return out
	case kObj:
		ms := v.o.members
		if v.o.sv != nil {
			ms = v.o.viewMembers()
		}
		out := []any{}
		for _, m := range ms {
			out = append(out, []any{m.key, materialize(m.v)})
		}
		return out
	}
	return "opaque"
}

func genGoPlan(r *rand.Rand) *plan.Plan {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	p := &plan.Plan{PlanVersion: 1, Profile: "volcanic", Sources: []plan.SourceRef{{Kind: "appsettings", Path: pick("", "appsettings.json")}}}
	if r.IntN(2) == 0 {
		p.Shadowed = []plan.Shadowed{{Name: "x", Origin: plan.Origin{Line: 1, Column: 2, Path: "a.json", Source: "appsettings"}}}
	}
	for i := r.IntN(8); i > 0; i-- {
		s := plan.Server{Name: pick("a", "b-1", "é", "x\"y\\z\u2028"), Command: pick("", "npx", "<&>"), Transport: pick("stdio", "http"),
			Enabled: r.IntN(2) == 0, IdleTimeoutSeconds: r.IntN(3) * 600, CallTimeoutSeconds: r.IntN(200), URL: pick("", "https://x/y"),
			Description: pick("", "d"), ActionSet: pick("", "mcp_x"), CannotStart: pick("", "why"), StderrLevel: "Warning",
			Origin: plan.Origin{Line: r.IntN(9), Column: r.IntN(9), Key: pick("", "k"), Path: "a.json", Source: "appsettings"}}
		switch r.IntN(3) {
		case 0: // nil args: null
		case 1:
			s.Args = []string{}
		default:
			s.Args = []string{pick("-y", ""), pick("@a/b@1.2.3", "\t")}
		}
		if r.IntN(3) > 0 {
			s.Env = map[string]*string{}
			for j := r.IntN(4); j > 0; j-- {
				v := pick("", "v", "${env:TELEGRAM_BOT_TOKEN}")
				s.Env[pick("B", "A", "a", "Z_")] = &v
			}
			if r.IntN(2) == 0 {
				s.Env["NULL"] = nil
			}
		}
		if r.IntN(2) == 0 {
			ps := pick("", "p")
			s.PromptSection = &ps
		}
		p.Servers = append(p.Servers, s)
	}
	return p
}

// The view of a volcanic plan is its canonical JSON: every key, in order,
// with the same values, the fields omitted where encoding/json omits them.
func TestPlanViewIsTheCanonicalJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 3))
	for i := 0; i < 300; i++ {
		p := genGoPlan(r)
		data, err := p.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		rd := &planReader{src: bytes.NewReader(data), data: make([]byte, 0, 64), mark: -1, all: true}
		read := rd.value(false)
		if rd.bad {
			t.Fatalf("the reader does not read %s", data)
		}
		view := viewOf(reflect.ValueOf(p))
		if got, want := materialize(view), materialize(read); !reflect.DeepEqual(got, want) {
			t.Fatalf("the view of the plan is\n%v\nits canonical JSON\n%s\nreads as\n%v", got, data, want)
		}
	}
	bad := &plan.Plan{Servers: []plan.Server{{Name: "\xff"}}}
	if got := fmt.Sprint(materialize(viewOf(reflect.ValueOf(bad)))); !bytes.Contains([]byte(got), []byte("opaque")) {
		t.Errorf("a name that is not UTF-8 is %s in the view, want opaque (encoding/json rewrites it)", got)
	}
}
