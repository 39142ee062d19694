package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/policies"
)

var shippedPacks = []string{"../../../policies/baseline", "../../../policies/strict"}

// The shipped packs pass their own tests, and each of their rules has a
// case that triggers it (testdata/ID) and a near miss (testdata/ID-ok)
// where it reports nothing.
func TestPolicyTestShippedPacks(t *testing.T) {
	code, stdout, stderr := run(t, append([]string{"policy", "test"}, shippedPacks...)...)
	if code != 0 || strings.Contains(stdout, "FAIL") {
		t.Fatalf("mcpc policy test of the shipped packs: exit %d\n%s%s", code, stdout, stderr)
	}
	packs, err := policies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range packs {
		for _, r := range p.Rules() {
			trigger, err := os.ReadFile(filepath.Join(shippedPacks[i], "testdata", r.ID, "expected.txt"))
			if err != nil || !strings.Contains(string(trigger), "["+r.ID+"]") {
				t.Errorf("pack %s: testdata/%s does not trigger %s (%v)", p.Name, r.ID, r.ID, err)
			}
			miss, err := os.ReadFile(filepath.Join(shippedPacks[i], "testdata", r.ID+"-ok", "expected.txt"))
			if err != nil || strings.Contains(string(miss), "["+r.ID+"]") {
				t.Errorf("pack %s: testdata/%s-ok is not a near miss of %s (%v)\n%s", p.Name, r.ID, r.ID, err, miss)
			}
		}
	}
}

const teamPack = `package team

import "strings"

input: _

rules: "team-no-script": {
	severity:    "error"
	description: "No server starts a shell script."
	example:     "\"command\": \"/opt/run.sh\""
	deny: [for i, s in input.servers if strings.HasSuffix(s.command, ".sh") {
		path:       ["servers", i, "command"]
		message:    "server \(s.name) starts the script \(s.command) with \(strings.Join(s.args, " "))"
	}]
}
`

// teamPackDir writes a pack with one rule and its two cases, expected as
// --update writes them, and returns its directory.
func teamPackDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "team")
	write(t, dir, "team.cue", teamPack)
	write(t, dir, "testdata/script/appsettings.json", `{"Mcp": {"Servers": {"s": {"Command": "/opt/run.sh", "Args": ["--token", "ghp_0123456789abcdefABCDEF0123456789abcd"]}}}}`)
	write(t, dir, "testdata/script-ok/appsettings.json", `{"Mcp": {"Servers": {"s": {"Command": "npx", "Args": ["-y", "x@1.0.0"]}}}}`)
	if code, stdout, stderr := run(t, "policy", "test", "--update", dir); code != 0 {
		t.Fatalf("policy test --update: exit %d\n%s%s", code, stdout, stderr)
	}
	return dir
}

func TestPolicyTestPassesAndUpdates(t *testing.T) {
	dir := teamPackDir(t)
	got, err := os.ReadFile(filepath.Join(dir, "testdata", "script", "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The secret in the args is redacted in what the pack test writes; the
	// compiler's errors are there too (a case that does not compile tests
	// little), the Go rules' findings (no such file /opt/run.sh) are not.
	want := "appsettings.json:1:39: error: server s starts the script /opt/run.sh with --token [REDACTED] [team-no-script]\n" +
		"appsettings.json:1:74: error: server \"s\": Args[1] holds what looks like a GitHub token, written into the file: it ends up in the repository and in the plan, and a command line shows in ps to every user of the machine [secret-literal]\n" +
		"  suggestion: pass it in env from a host variable: \"NAME\": \"${env:NAME}\", and let the server read NAME\n"
	if string(got) != want {
		t.Errorf("expected.txt written:\n%s\nwant:\n%s", got, want)
	}
	if miss, _ := os.ReadFile(filepath.Join(dir, "testdata", "script-ok", "expected.txt")); len(miss) != 0 {
		t.Errorf("the near miss finds: %s", miss)
	}
	code, stdout, stderr := run(t, "policy", "test", dir)
	if code != 0 || !strings.Contains(stdout, "ok   "+filepath.Join(dir, "testdata", "script")+"\n") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// A case whose findings differ fails with the difference; so does a rule
// no case reports; so does a case without expected.txt.
func TestPolicyTestDifferences(t *testing.T) {
	dir := teamPackDir(t)
	expected := filepath.Join(dir, "testdata", "script", "expected.txt")
	old, err := os.ReadFile(expected)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "testdata/script/expected.txt", strings.Replace(string(old), " with --token [REDACTED]", "", 1))
	code, stdout, _ := run(t, "policy", "test", dir)
	if code != 1 || !strings.Contains(stdout, "FAIL "+filepath.Dir(expected)+": the findings differ from expected.txt (- expected, + found):\n"+
		"  - appsettings.json:1:39: error: server s starts the script /opt/run.sh [team-no-script]\n"+
		"  + appsettings.json:1:39: error: server s starts the script /opt/run.sh with --token [REDACTED] [team-no-script]\n") {
		t.Errorf("a changed finding: exit %d\n%s", code, stdout)
	}
	if strings.Contains(stdout, "ghp_") {
		t.Errorf("the diff shows the secret:\n%s", stdout)
	}

	os.Remove(expected)
	code, stdout, _ = run(t, "policy", "test", dir)
	if code != 1 || !strings.Contains(stdout, "FAIL "+filepath.Dir(expected)+": no expected.txt; it finds:\n    appsettings.json:1:39") {
		t.Errorf("no expected.txt: exit %d\n%s", code, stdout)
	}

	os.RemoveAll(filepath.Dir(expected))
	code, stdout, _ = run(t, "policy", "test", dir)
	if code != 1 || !strings.Contains(stdout, "FAIL "+dir+": rule team-no-script is reported by no case of testdata") {
		t.Errorf("an untested rule: exit %d\n%s", code, stdout)
	}
}

// What cannot be tested is a usage error (2), positioned where it can be.
func TestPolicyTestInputs(t *testing.T) {
	noCases := filepath.Join(t.TempDir(), "p")
	write(t, noCases, "p.cue", teamPack)
	broken := filepath.Join(t.TempDir(), "q")
	write(t, broken, "q.cue", "package q\nrules: {\n")
	write(t, broken, "testdata/a/appsettings.json", `{}`)
	noSources := teamPackDir(t)
	write(t, noSources, "testdata/empty/README", "nothing here")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"policy", "test"}, "give the pack's DIR"},
		{[]string{"policy", "test", filepath.Join(noCases, "missing")}, "not a directory"},
		{[]string{"policy", "test", noCases}, "testdata: no such file or directory"},
		{[]string{"policy", "test", broken}, "q.cue:2:10: error: the policy file is not valid CUE"},
		{[]string{"policy", "test", noSources}, "case " + filepath.Join(noSources, "testdata", "empty") + ": no sources found"},
	} {
		code, stdout, stderr := run(t, c.args...)
		if code != 2 || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s%s", c.args, code, c.want, stdout, stderr)
		}
	}
}
