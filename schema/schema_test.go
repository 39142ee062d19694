package schema

import (
	"fmt"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/node"
)

func TestCheckProto(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	src := `{"comand": "npx", "args": ["a", 3], "env": {"A": 1, "B": null}, "startupTimeoutSeconds": 0, "callTimeoutSeconds": "5", "idleTimeoutSeconds": 1.5, "stderrLevel": "Warn", "toolPrefix": "a.b", "enabled": "yes", "promptSection": null}`
	n, d := node.ParseJSON("x.json", []byte(src), false)
	if d != nil {
		t.Fatal(d)
	}
	for _, d := range v.Check(Server, n, `server "x"`, nil) {
		fmt.Printf("%+v\n", d)
	}
	fmt.Println(v.Fields(Server))
}

func BenchmarkCheckServer(b *testing.B) {
	v, _ := New()
	src := `{"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1", "B": null}, "startupTimeoutSeconds": 10, "stderrLevel": "Warning", "toolPrefix": "ab"}`
	n, _ := node.ParseJSON("x.json", []byte(src), false)
	for b.Loop() {
		if ds := v.Check(Server, n, "", nil); len(ds) > 0 {
			b.Fatal(ds)
		}
	}
}
