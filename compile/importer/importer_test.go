package importer_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/shlex"
	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/importer"
	_ "github.com/mcpc-dev/mcpc/compile/profiles"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/report"
)

// importCase is one golden case of mcpc import (fixtures/import-*/cmd).
type importCase struct {
	name, file string
	data       []byte
	opts       importer.Options
}

// importCases reads the golden cases' command lines.
func importCases(t testing.TB) []importCase {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "..", "fixtures", "import-*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no import cases: %v", err)
	}
	var out []importCase
	for _, dir := range dirs {
		cmd, err := os.ReadFile(filepath.Join(dir, "cmd"))
		if err != nil {
			t.Fatal(err)
		}
		words, err := shlex.Split(strings.ReplaceAll(string(cmd), "$CASE", dir))
		if err != nil {
			t.Fatal(err)
		}
		c := importCase{name: filepath.Base(dir)}
		for i := 1; i < len(words); i++ {
			switch words[i] {
			case "--from":
				i++
				c.opts.From = words[i]
			case "--to":
				i++
				c.opts.To = words[i]
			case "--form":
				i++
				c.opts.Form = words[i]
			default:
				c.file = words[i]
			}
		}
		if c.data, err = os.ReadFile(c.file); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestGoldenOutputsAreValid: every case that converts gives a configuration
// the target accepts. Volcanic output is compiled in-process, as mcpc
// validate compiles it; craftbot output is checked against the seed's
// mcp_config.json shape (mcpc validate --profile craftbot comes with the
// craftbot profile).
func TestGoldenOutputsAreValid(t *testing.T) {
	converted := map[string]int{}
	for _, c := range importCases(t) {
		t.Run(c.name, func(t *testing.T) {
			res, err := importer.Import(c.file, c.data, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Output == nil {
				if !res.HasErrors() {
					t.Errorf("no output, and no error says why")
				}
				return
			}
			if res.HasErrors() && res.Failed == 0 {
				t.Errorf("an output beside errors, and no server left out")
			}
			converted[c.opts.To]++
			checkOutput(t, res.Output, c.opts)
		})
	}
	if converted[importer.Volcanic] < 5 || converted[importer.Craftbot] < 5 {
		t.Errorf("too few converting cases: %v", converted)
	}
}

// checkOutput fails t unless out is a valid configuration for opts.To.
func checkOutput(t testing.TB, out []byte, opts importer.Options) {
	t.Helper()
	if opts.To == importer.Craftbot {
		if msg := craftbotShape(out); msg != "" {
			t.Fatalf("craftbot output: %s\n%s", msg, out)
		}
		for _, d := range compileCraftbot(t, out) {
			if d.Severity == diag.Error {
				t.Fatalf("craftbot output does not compile: %s: %s [%s]\n%s", d.Pos(), d.Message, d.Rule, out)
			}
		}
		return
	}
	for _, d := range compileVolcanic(t, out, opts.Form) {
		if d.Severity == diag.Error {
			t.Fatalf("volcanic output does not compile: %s: %s [%s]\n%s", d.Pos(), d.Message, d.Rule, out)
		}
	}
}

// compileVolcanic compiles out as the agent's settings.json, or as the
// one appsettings file.
func compileVolcanic(t testing.TB, out []byte, form string) []diag.Diagnostic {
	t.Helper()
	dir := filepath.Join("/nonexistent-import", "agent")
	want := filepath.Join(dir, "settings.json")
	opts := compile.Options{CleanEnv: true, AgentDir: dir, HomeDir: "/nonexistent-import"}
	if form == importer.FormAppSettings {
		want = "/nonexistent-import/appsettings.json"
		opts.AppSettings = []string{want}
	}
	opts.ReadFile = func(path string) ([]byte, error) {
		if path == want {
			return out, nil
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	res, err := compile.Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	if form != importer.FormAppSettings && res.AgentDir != dir {
		t.Fatalf("compiled agent dir %s", res.AgentDir)
	}
	return res.Diagnostics
}

// compileCraftbot compiles craftbot output as mcpc validate --profile
// craftbot would.
func compileCraftbot(t testing.TB, out []byte) []diag.Diagnostic {
	t.Helper()
	const file = "/nonexistent-import/app/config/mcp_config.json"
	res, err := compile.Compile(compile.Options{Profile: craftbot.Profile.Name(), CleanEnv: true, Config: file, TargetOS: "linux",
		ReadFile: func(path string) ([]byte, error) {
			if path == file {
				return out, nil
			}
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Diagnostics
}

var craftbotName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,58}$`)

// craftbotShape checks mcp_config.json as the CraftBot seed describes it;
// it returns what is wrong, or "".
func craftbotShape(out []byte) string {
	var cfg map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&cfg); err != nil {
		return "not a JSON object: " + err.Error()
	}
	for k := range cfg {
		if k != "auto_connect" && k != "mcp_servers" {
			return "unknown top-level key " + k
		}
	}
	var auto bool
	if err := json.Unmarshal(cfg["auto_connect"], &auto); err != nil {
		return "auto_connect: " + err.Error()
	}
	var servers []map[string]json.RawMessage
	if err := json.Unmarshal(cfg["mcp_servers"], &servers); err != nil || servers == nil {
		return "mcp_servers is not a list"
	}
	names := map[string]bool{}
	for i, s := range servers {
		var e struct {
			Name, Description, Transport, Command, URL string
			Args                                       []string
			Env                                        map[string]string
			Enabled                                    *bool
		}
		for k := range s {
			switch k {
			case "name", "description", "transport", "command", "args", "env", "url", "enabled", "action_set_name":
			default:
				return "unknown field " + k
			}
		}
		if err := json.Unmarshal(mustJSON(s), &e); err != nil {
			return err.Error()
		}
		switch {
		case !craftbotName.MatchString(e.Name):
			return "bad name " + e.Name
		case names[strings.ToLower(e.Name)]:
			return "duplicate name " + e.Name
		case e.Enabled == nil:
			return "no enabled in entry " + e.Name
		case e.Transport == "stdio" && (e.Command == "" || s["url"] != nil || s["args"] == nil || s["env"] == nil):
			return "stdio entry " + e.Name + " without command, args, env (or with url)"
		case (e.Transport == "sse" || e.Transport == "websocket") && (e.URL == "" || s["command"] != nil):
			return "remote entry " + e.Name + " without url (or with command)"
		case e.Transport != "stdio" && e.Transport != "sse" && e.Transport != "websocket":
			return "bad transport " + e.Transport
		case e.Transport == "websocket" && !strings.HasPrefix(e.URL, "ws"):
			return "websocket entry with a non-ws url"
		}
		_ = i
		names[strings.ToLower(e.Name)] = true
	}
	return ""
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// canary finds the planted secrets of the golden inputs: every credential
// there contains CANARY.
var canary = regexp.MustCompile(`CANARY[A-Za-z0-9]*`)

// TestReportsNeverShowSecrets prints every case's report in every format,
// with excerpts, and looks for the canaries: a literal credential of the
// source (an env value under a credential key, a header value, a URL's
// query or user info) must never show. Volcanic output holds none either.
func TestReportsNeverShowSecrets(t *testing.T) {
	planted := 0
	for _, c := range importCases(t) {
		canaries := canary.FindAllString(string(c.data), -1)
		planted += len(canaries)
		res, err := importer.Import(c.file, c.data, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range report.Formats {
			p, err := report.New(format, report.Options{Sources: res.Excerpts(c.file, c.data), Redact: res.Redact, Rules: importer.Lookup})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := p.Print(&buf, res.Diagnostics); err != nil {
				t.Fatal(err)
			}
			for _, s := range canaries {
				if strings.Contains(buf.String(), s) || strings.Contains(buf.String(), "CANARY") {
					t.Errorf("%s: the %s report shows the secret %s:\n%s", c.name, format, s, buf.String())
				}
			}
		}
		if c.opts.To == importer.Volcanic && strings.Contains(string(res.Output), "CANARY") {
			t.Errorf("%s: the volcanic output holds a literal credential:\n%s", c.name, res.Output)
		}
	}
	if planted < 10 {
		t.Fatalf("only %d canaries planted in the golden inputs", planted)
	}
}
