package remote

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Validate opens the sealed parts only with the host secret and a scope;
// an entry sealed for another scope is remote-sealed at its sealed value.
func TestValidate(t *testing.T) {
	k := mustKey(t, "host-secret")
	s := testServer()
	sealed, err := k.Seal("chat-1", s, Headers{"Authorization": "Bearer tok-1"})
	if err != nil {
		t.Fatal(err)
	}
	other := s
	other.Name = "other"
	otherSealed, err := k.Seal("chat-2", other, Headers{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := (&File{Path: "servers.json"}).WithEntry(s, sealed)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Parse("servers.json", f).WithEntry(other, otherSealed)
	if err != nil {
		t.Fatal(err)
	}
	file := Parse("servers.json", data)
	env := func(vars ...string) func(string) string {
		return func(name string) string {
			for i := 0; i+1 < len(vars); i += 2 {
				if vars[i] == name {
					return vars[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		scope  string
		lookup func(string) string
		want   string
	}{
		{"chat-1", env(SecretVar, "host-secret"), "opened with MCP_ENCRYPTION_SECRET: [servers.json:5:"},
		{"chat-1", env(FallbackSecretVar, "host-secret"), "opened with TELEGRAM_BOT_TOKEN: [servers.json:5:"},
		{"", env(SecretVar, "host-secret"), "not opened: []"},
		{"chat-1", env(), "no secret: []"},
	} {
		v, err := Validate(file, tc.scope, tc.lookup)
		if err != nil {
			t.Fatal(err)
		}
		var ds []string
		for _, d := range v.Diagnostics {
			ds = append(ds, d.Pos().String())
			if d.Rule != rules.RemoteSealed.ID || !strings.Contains(d.Message, `server "other"`) {
				t.Errorf("%s: %v", tc.scope, d)
			}
		}
		state := "not opened"
		switch {
		case v.OpenedWith != "":
			state = "opened with " + v.OpenedWith
		case v.NoSecret:
			state = "no secret"
		}
		if got := fmt.Sprintf("%s: %v", state, ds); !strings.HasPrefix(got, tc.want) {
			t.Errorf("scope %q: %s, want %s", tc.scope, got, tc.want)
		}
	}

	// A file that is not used: its own problem, nothing opened.
	broken := Parse("servers.json", []byte("{\n  \"version\": 2,\n  \"servers\": []\n}\n"))
	v, err := Validate(broken, "chat-1", env(SecretVar, "host-secret"))
	if err != nil || v.OpenedWith != "" || len(v.Diagnostics) != 1 || v.Diagnostics[0].Rule != rules.RemoteVersion.ID {
		t.Errorf("broken file: %+v, %v", v, err)
	}
}
