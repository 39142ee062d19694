package mcpc_test

import (
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"
	cueyaml "cuelang.org/go/encoding/yaml"
	"github.com/bmatcuk/doublestar/v4"

	"github.com/mcpc-dev/mcpc/internal/testmain"
)

// The files a release and CI read (action.yml, .goreleaser.yaml, Dockerfile,
// the workflows) are checked by their ecosystems' tools where .ci/run
// installs them (actionlint; MCPC_REQUIRE_TOOLS=1 there makes it missing a
// failure) or a developer has (goreleaser), and what they run is run here.

// readYAML decodes a YAML file through CUE (a dependency mcpc already has).
func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cueyaml.Extract(file, data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	val := cuecontext.New().BuildFile(f)
	if err := val.Err(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if err := val.Decode(v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// tool finds a checker on PATH or in $(go env GOPATH)/bin, where .ci/run
// installs those that install in seconds; without it the test is skipped,
// with the reason in the summary, or fails when it is required and
// MCPC_REQUIRE_TOOLS=1 (CI).
func tool(t *testing.T, name, install string, required bool) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	reason := name + " is not installed (" + install + ")"
	if required && os.Getenv("MCPC_REQUIRE_TOOLS") == "1" {
		t.Fatal(reason)
	}
	testmain.Skip(t, reason)
	return ""
}

type action struct {
	Inputs map[string]struct {
		Default string `json:"default"`
	} `json:"inputs"`
	Runs struct {
		Using string `json:"using"`
		Steps []struct {
			Name string            `json:"name"`
			Uses string            `json:"uses"`
			If   string            `json:"if"`
			Run  string            `json:"run"`
			Env  map[string]string `json:"env"`
			With map[string]any    `json:"with"`
		} `json:"steps"`
	} `json:"runs"`
}

// actionlint checks the workflows (the repository's own uses action.yml as
// ./, which checks the action's inputs and metadata), the template of
// docs/ci, and the action's steps as a workflow of their own (their
// expressions and contexts: actionlint reads action.yml's steps only that
// way).
func TestActionlint(t *testing.T) {
	bin := tool(t, "actionlint", "go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12", true)
	tool(t, "shellcheck", "apt-get install shellcheck: actionlint checks the run steps' shell with it", true)
	data, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	inputs := text[strings.Index(text, "\ninputs:\n")+len("\ninputs:\n") : strings.Index(text, "\noutputs:\n")]
	steps := text[strings.Index(text, "\n  steps:\n")+len("\n  steps:\n"):]
	indent := func(s, by string) string {
		return regexp.MustCompile(`(?m)^(.)`).ReplaceAllString(s, by+"$1")
	}
	wf := "on:\n  workflow_dispatch:\n    inputs:\n" + indent(inputs, "    ") + "\njobs:\n  action:\n    runs-on: ubuntu-latest\n    steps:\n" + indent(steps, "  ")
	derived := filepath.Join(t.TempDir(), "action-steps.yml")
	if err := os.WriteFile(derived, []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	templates, _ := filepath.Glob("docs/ci/*.yml")
	workflows, _ := filepath.Glob(".github/workflows/*.yml")
	for _, args := range [][]string{append(workflows, templates...), {derived}} {
		cmd := exec.Command(bin, append([]string{"-no-color"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("actionlint %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if !slices.ContainsFunc(workflows, func(f string) bool {
		b, _ := os.ReadFile(f)
		return strings.Contains(string(b), "uses: ./\n")
	}) {
		t.Error("no workflow uses the action as ./, so actionlint does not read action.yml")
	}
}

// The action's install and lint steps run as a runner runs them: the
// install builds the action's own checkout (no version) into GOPATH/bin and
// puts it on GITHUB_PATH; lint writes one SARIF document, also when it
// fails, and its exit is lint's. The upload runs under always().
func TestActionSteps(t *testing.T) {
	var a action
	readYAML(t, "action.yml", &a)
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q", a.Runs.Using)
	}
	script := map[string]string{}
	for _, s := range a.Runs.Steps {
		script[s.Name] = s.Run
		if strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@") {
			if !strings.HasPrefix(s.If, "always()") || s.With["sarif_file"] != "${{ inputs.sarif-file }}" {
				t.Errorf("the upload step runs under %q with %v: want always() and the SARIF file", s.If, s.With)
			}
			script["upload"] = "yes"
		}
	}
	if script["Install mcpc"] == "" || script["Lint"] == "" || script["upload"] == "" {
		t.Fatalf("the action lacks its install, lint or upload step: %v", script)
	}
	repo, _ := os.Getwd()
	home := t.TempDir()
	gopath := filepath.Join(home, "go")
	modcache, _ := exec.Command("go", "env", "GOMODCACHE").Output()
	githubPath := filepath.Join(home, "github_path")
	env := append(os.Environ(), "GOPATH="+gopath, "GOMODCACHE="+strings.TrimSpace(string(modcache)), "GOBIN=", "GOFLAGS=",
		"GITHUB_PATH="+githubPath, "MCPC_VERSION=", "ACTION_PATH="+repo)
	bash := func(s string, env []string, dir string) (int, string) {
		cmd := exec.Command("bash", "-e", "-c", s)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := bash(script["Install mcpc"], env, home); code != 0 {
		t.Fatalf("install: exit %d\n%s", code, out)
	}
	added, _ := os.ReadFile(githubPath)
	if strings.TrimSpace(string(added)) != filepath.Join(gopath, "bin") {
		t.Fatalf("GITHUB_PATH gets %q", added)
	}
	path := "PATH=" + filepath.Join(gopath, "bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	lint := func(paths, strict string) (int, string, map[string]any) {
		sarif := filepath.Join(t.TempDir(), "mcpc.sarif")
		code, out := bash(script["Lint"], append(slices.Clone(env), path, "MCPC_PATHS="+paths, "MCPC_STRICT="+strict, "SARIF_FILE="+sarif), repo)
		data, err := os.ReadFile(sarif)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Errorf("lint %s: the SARIF file is not one JSON document: %v\n%s", paths, err, data)
		}
		return code, out, doc
	}
	if code, out, doc := lint("examples/volcanic", "true"); code != 0 || doc["version"] != "2.1.0" {
		t.Errorf("lint of the example: exit %d, SARIF version %v\n%s", code, doc["version"], out)
	}
	if code, out, doc := lint("fixtures/rule-package-unpinned", "true"); code != 1 || doc["version"] != "2.1.0" {
		t.Errorf("lint of a deployment with a warning, strict: exit %d, SARIF version %v\n%s", code, doc["version"], out)
	}
}

type goreleaser struct {
	Version int `json:"version"`
	Builds  []struct {
		Main    string   `json:"main"`
		Env     []string `json:"env"`
		Flags   []string `json:"flags"`
		Ldflags []string `json:"ldflags"`
		Goos    []string `json:"goos"`
		Goarch  []string `json:"goarch"`
	} `json:"builds"`
	Checksum struct {
		NameTemplate string `json:"name_template"`
	} `json:"checksum"`
}

// .goreleaser.yaml builds the six targets without cgo, with checksums; its
// ldflags set the version mcpc version prints; goreleaser check accepts it.
func TestGoreleaserConfig(t *testing.T) {
	var g goreleaser
	readYAML(t, ".goreleaser.yaml", &g)
	if g.Version != 2 || len(g.Builds) != 1 || g.Checksum.NameTemplate == "" {
		t.Fatalf("want a version 2 config with one build and checksums: %+v", g)
	}
	b := g.Builds[0]
	slices.Sort(b.Goos)
	slices.Sort(b.Goarch)
	if !slices.Equal(b.Goos, []string{"darwin", "linux", "windows"}) || !slices.Equal(b.Goarch, []string{"amd64", "arm64"}) ||
		!slices.Contains(b.Env, "CGO_ENABLED=0") || b.Main != "./cmd/mcpc" || len(b.Ldflags) != 1 {
		t.Errorf("build: %+v", b)
	}
	bin := filepath.Join(t.TempDir(), "mcpc")
	ldflags := strings.ReplaceAll(b.Ldflags[0], "{{.Version}}", "9.9.9-release")
	args := append(append([]string{"build", "-o", bin}, b.Flags...), "-ldflags", ldflags, b.Main)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), b.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "mcpc 9.9.9-release\n") {
		t.Errorf("the release binary's version: %v\n%s", err, out)
	}
	// goreleaser builds for minutes from source, so .ci/run does not
	// install it; the keys above are what CI checks without it.
	check := tool(t, "goreleaser", "go install github.com/goreleaser/goreleaser/v2@v2.15.1", false)
	if out, err := exec.Command(check, "check").CombinedOutput(); err != nil {
		t.Errorf("goreleaser check: %v\n%s", err, out)
	}
}

// dockerInstruction is one instruction of a Dockerfile: its keyword and
// the rest of its (joined) line.
type dockerInstruction struct{ keyword, args string }

func parseDockerfile(t *testing.T, file string) []dockerInstruction {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []dockerInstruction
	line := ""
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") || (line == "" && strings.TrimSpace(l) == "") {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			line += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		line += l
		keyword, args, _ := strings.Cut(strings.TrimSpace(line), " ")
		if strings.ToUpper(keyword) != keyword || keyword == "" {
			t.Fatalf("%s: %q is not an instruction", file, line)
		}
		out = append(out, dockerInstruction{keyword, strings.TrimSpace(args)})
		line = ""
	}
	return out
}

// The Dockerfile (docker is not on this machine, and hadolint is a Haskell
// program with no Go or Debian install here) is parsed and its build is
// run: two stages, the build stage's go build without cgo gives a static
// binary, the image is that binary alone on scratch as a non-root user, and
// .dockerignore keeps nothing from the build that it reads.
func TestDockerfile(t *testing.T) {
	ins := parseDockerfile(t, "Dockerfile")
	var froms, users []string
	var build, entrypoint string
	args := map[string]string{}
	for _, in := range ins {
		switch in.keyword {
		case "FROM":
			froms = append(froms, in.args)
		case "USER":
			users = append(users, in.args)
		case "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			args[k] = v
		case "RUN":
			if strings.Contains(in.args, "go build") {
				build = in.args
			}
		case "ENTRYPOINT":
			entrypoint = in.args
		}
	}
	if len(froms) != 2 || !strings.HasSuffix(froms[0], " AS build") || froms[1] != "scratch" {
		t.Errorf("stages: %q, want a build stage and scratch", froms)
	}
	if len(users) != 1 || strings.HasPrefix(users[0], "0") || strings.HasPrefix(users[0], "root") {
		t.Errorf("USER %q: the image runs as a user that is not root", users)
	}
	var ep []string
	if err := json.Unmarshal([]byte(entrypoint), &ep); err != nil || len(ep) != 1 || ep[0] != "/mcpc" {
		t.Errorf("ENTRYPOINT %s: want the exec form [\"/mcpc\"]", entrypoint)
	}
	if !strings.HasPrefix(build, "CGO_ENABLED=0 go build ") || !strings.Contains(build, " -o /out/mcpc ") {
		t.Fatalf("the build stage's go build: %q", build)
	}
	out := filepath.Join(t.TempDir(), "mcpc")
	line := strings.ReplaceAll(strings.ReplaceAll(build, "/out/mcpc", out), "${VERSION}", args["VERSION"])
	cmd := exec.Command("sh", "-c", line)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || len(libs) > 0 {
			t.Errorf("the image's binary is not static (interpreter or libraries %v)", libs)
			break
		}
	}
	if b, err := exec.Command(out, "version").Output(); err != nil || !strings.HasPrefix(string(b), "mcpc "+args["VERSION"]+"\n") {
		t.Errorf("the image's mcpc version: %v\n%s", err, b)
	}
	// Every file the build reads (the packages of cmd/mcpc and what they
	// embed, go.mod, go.sum) is in the build context.
	ignore, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(ignore), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, strings.TrimPrefix(l, "/"))
		}
	}
	list, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}`, "./cmd/mcpc").Output()
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := os.Getwd()
	files := []string{"go.mod", "go.sum"}
	for _, f := range strings.Fields(string(list)) {
		if rel, err := filepath.Rel(repo, f); err == nil && filepath.IsLocal(rel) {
			files = append(files, filepath.ToSlash(rel))
		}
	}
	if len(files) < 50 {
		t.Fatalf("go list found %d files of mcpc", len(files))
	}
	for _, f := range files {
		for _, p := range patterns {
			// A pattern excludes a path and everything below it.
			for dir := f; dir != "."; dir = filepath.ToSlash(filepath.Dir(dir)) {
				if ok, _ := doublestar.Match(p, dir); ok {
					t.Errorf(".dockerignore's %s keeps %s, which the build reads, out of the context", p, f)
				}
			}
		}
	}
}
