package gateway

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/runtime"
)

// The Browser section mentions send only when a send tool is active: the
// host's built-in (in the default built-ins), or, when send is not a
// built-in, a server's tool registered as send. Its file-name advice is
// the seed's: filename: "browser/<name>.png".
func TestBrowserSectionSend(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	preset := func() plan.Server {
		s := testServer("playwright", "-tools", "browser_navigate")
		s.Origin = plan.Origin{Source: "preset"}
		return s
	}
	sender := testServer("other", "-tools", "send")
	cases := []struct {
		name     string
		servers  []plan.Server
		builtins []string
		send     bool
	}{
		{"default built-ins", []plan.Server{preset()}, nil, true},
		{"send a built-in, a server's send skipped", []plan.Server{sender, preset()}, []string{"read", "send"}, true},
		{"no built-ins, no send tool", []plan.Server{preset()}, []string{}, false},
		{"no built-ins, a server's send", []plan.Server{sender, preset()}, []string{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newTestHost(t, testPlan(tc.servers...), runtime.HostOptions{Env: testEnv(marker), Builtins: tc.builtins})
			gw := NewGateway(h, GatewayOptions{Version: "test"})
			t.Cleanup(gw.Close)
			chat, _ := h.Chat("c", filepath.Join(t.TempDir(), "ws"))
			cs := connectVersion(t, gw, chat, nil, "2025-11-25")
			got := cs.InitializeResult().Instructions
			if !strings.Contains(got, "Browser\nYou control a web browser") {
				t.Fatalf("instructions = %q, want the Browser section", got)
			}
			if !strings.Contains(got, `filename: "browser/<name>.png"`) {
				t.Errorf("instructions = %q, want the seed's advice filename: \"browser/<name>.png\"", got)
			}
			if mentions := strings.Contains(got, "Use send"); mentions != tc.send {
				t.Errorf("instructions = %q: mentions send = %v, want %v", got, mentions, tc.send)
			}
		})
	}
}
