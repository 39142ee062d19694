package runtime

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
)

// A craftbot server's launch: command and args literal, the host
// environment without deny-listed variables, and each ${config:KEY} read
// through the lookup exactly as the config file holds it (a value that
// looks like a template stays literal).
func TestCraftbotLaunch(t *testing.T) {
	t.Parallel()
	ref := func(k string) *string { v := plan.ConfigRef(k); return &v }
	empty := ""
	s := &plan.Server{Name: "fs", Transport: "stdio", Command: "npx", Args: []string{"-y", "${workspace}/x"},
		Env: map[string]*string{"TOKEN": ref("TOKEN"), "ODD": ref("ODD"), "EMPTY": &empty, "HOME": nil}}
	config := map[string]string{"TOKEN": "CANARY-cb-launch-77", "ODD": " ${env:HOME} \n two lines "}
	lookup := func(server, key string) (string, bool) {
		if server != "fs" {
			t.Errorf("looked up server %q", server)
		}
		v, ok := config[key]
		return v, ok
	}
	env := HostEnv{Vars: map[string]string{"PATH": "/bin", "HOME": "/root", "TELEGRAM_BOT_TOKEN": "sealing"}, Deny: denylist.Default()}
	spec, err := CraftbotLaunch(s, env, lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"EMPTY=", "ODD= ${env:HOME} \n two lines ", "PATH=/bin", "TOKEN=CANARY-cb-launch-77"}
	if !reflect.DeepEqual(spec.Env, want) {
		t.Errorf("env %q\nwant %q", spec.Env, want)
	}
	if spec.Command != "npx" || !reflect.DeepEqual(spec.Args, []string{"-y", "${workspace}/x"}) || spec.Dir != "" {
		t.Errorf("%+v", spec)
	}

	delete(config, "TOKEN")
	if _, err := CraftbotLaunch(s, env, lookup); err == nil || !strings.Contains(err.Error(), "env TOKEN") {
		t.Errorf("a value gone from the file: %v", err)
	}
	lit := "literal"
	s.Env = map[string]*string{"X": &lit}
	if _, err := CraftbotLaunch(s, env, lookup); err == nil {
		t.Errorf("a literal value in a craftbot plan was launched")
	}
}

func TestCraftbotTargetsStdioEnabledOnly(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{Profile: plan.ProfileCraftbot, Servers: []plan.Server{
		{Name: "a", Transport: "stdio", Command: "x", Enabled: true},
		{Name: "b", Transport: "stdio", Command: "x"},
		{Name: "c", Transport: "sse", URL: "http://127.0.0.1:1/sse", Enabled: true},
		{Name: "d", Transport: "websocket", URL: "ws://127.0.0.1:1/ws", Enabled: true},
		{Name: "e", Transport: "stdio", Command: "y", Enabled: true},
	}}
	var names []string
	for _, tg := range CraftbotTargets(p, HostEnv{Deny: denylist.Default()}, nil) {
		names = append(names, tg.Server)
	}
	if !reflect.DeepEqual(names, []string{"a", "e"}) {
		t.Errorf("%v", names)
	}
}

// A server the host loads but cannot start (plan.Server.CannotStart) is
// not launched: CraftbotLaunch refuses it with the reason, which discovery
// (mcpc tools) reports as the failure, without a launch-spec prefix.
func TestCraftbotLaunchRefusesWhatCannotStart(t *testing.T) {
	t.Parallel()
	reason := "command is a list, what the host's /mcp add writes; it never starts"
	s := plan.Server{Name: "fs", Transport: "stdio", Command: "/bin/true", Enabled: true, CannotStart: reason}
	_, err := CraftbotLaunch(&s, HostEnv{Deny: denylist.Default()}, nil)
	if err == nil || err.Error() != reason {
		t.Fatalf("launched, or another error: %v", err)
	}
	p := &plan.Plan{Profile: plan.ProfileCraftbot, Servers: []plan.Server{s}}
	found := Discover(t.Context(), CraftbotTargets(p, HostEnv{Deny: denylist.Default()}, nil), DiscoverOptions{})
	if len(found) != 1 || found[0].Err == nil || found[0].Reason != reason {
		t.Errorf("discovery %+v", found)
	}
}
