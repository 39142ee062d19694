package runtime

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A plan value referring to a host variable that is not set gives the
// server an empty value: it is logged once when the host starts, and
// status names the variables.
func TestUnsetHostVariableWarned(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	s := testServer("notes", "-tools", "echo")
	s.Env = map[string]*string{"A": ptr("${env:NOPE}"), "B": ptr("x-${env:ALSO_NOPE}-${env:NOPE}"), "C": ptr("${env:SET_ONE}")}
	off := testServer("off")
	off.Enabled = false
	off.Env = map[string]*string{"A": ptr("${env:NOPE}")}
	var log logRecorder
	h := newTestHost(t, testPlan(s, off), HostOptions{Env: testEnv(marker, "SET_ONE=1"), Log: log.log})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	for range 2 {
		if _, err := c.Tools(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := "Warning [/notes] MCP server notes: env refers to host variables that are not set: ALSO_NOPE, NOPE; the server gets them empty\n"
	if got := log.text(); strings.Count(got, "not set") != 1 || !strings.Contains(got, want) {
		t.Errorf("log:\n%s\nwant once:\n%s", got, want)
	}
	st := h.Status().Servers
	if !slices.Equal(st[0].UnsetEnv, []string{"ALSO_NOPE", "NOPE"}) || st[1].UnsetEnv != nil {
		t.Errorf("status unsetEnv %v, %v", st[0].UnsetEnv, st[1].UnsetEnv)
	}
}
