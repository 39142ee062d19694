package volcanic_test

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/compile"
	_ "github.com/mcpc-dev/mcpc/compile/craftbot" // its deployments are among the cases
	"github.com/mcpc-dev/mcpc/compile/volcanic"
	"github.com/mcpc-dev/mcpc/internal/report"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// Small inputs that once took huge work, each beside a realistic input of
// the same size: what `mcpc validate` does with them (compile, then print
// the text report) must cost a small multiple of what the realistic one
// costs. docs/performance.md has the ratios.

// sized is a deployment whose files come to about size bytes.
type sized func(size int) (compile.Options, map[string][]byte)

var adversarialCases = []struct {
	name string
	bad  func() (compile.Options, map[string][]byte)
	// like is the realistic deployment of the same kind of file.
	like sized
}{
	// The three inputs.
	{"env file, a variable of 200000 levels (400 KB)", func() (compile.Options, map[string][]byte) {
		return envFileOf("Mcp__" + strings.Repeat(":a", 200000) + "=x\n")
	}, realisticEnvFile},
	{"settings.json, an env value of 300000 keys (4.7 MB)", func() (compile.Options, map[string][]byte) {
		return volcanic.SettingsOf(`{"mcpServers": {"s": {"command": "echo", "env": {"X": {` + joinN(300000, `"k%d": "v"`) + `}}}}}`)
	}, realisticSettings},
	{"mcp_config.json, an entry of 100000 bad env values (1.7 MB)", func() (compile.Options, map[string][]byte) {
		return craftbotOf(`{"mcp_servers": [{"name": "s", "transport": "stdio", "command": "echo", "env": {` + joinN(100000, `"K%[1]d": %[1]d`) + `}}]}`)
	}, realisticCraftbot},
	// Nearby shapes.
	{"settings.json, 200000 unknown fields (4 MB)", func() (compile.Options, map[string][]byte) {
		return volcanic.SettingsOf(`{"mcpServers": {"s": {"command": "echo", ` + joinN(200000, `"comand%d": "x"`) + `}}}`)
	}, realisticSettings},
	{"settings.json, an unknown key of 4 MB", func() (compile.Options, map[string][]byte) {
		return volcanic.SettingsOf(`{"mcpServers": {"s": {"command": "echo", "` + strings.Repeat("comand", 4<<20/6) + `": 1}}}`)
	}, realisticSettings},
	{"appsettings.json, a key of 200000 levels (400 KB)", func() (compile.Options, map[string][]byte) {
		return volcanic.AppSettingsOf(`{"Mcp:Servers:x:Command": "y", "Mcp:Servers:x:Bar` + strings.Repeat(":a", 200000) + `": 1}`)
	}, realisticAppSettings},
	{"settings.json, 10000 values nested 60 levels (1.2 MB)", func() (compile.Options, map[string][]byte) {
		return volcanic.SettingsOf(`{"mcpServers": {"s": {"command": "echo", "extra": [` + joinN(10000, strings.Repeat("[", 59)+"%[1]d"+strings.Repeat("]", 59)) + `]}}}`)
	}, realisticSettings},
	{"mcp_config.json, 1000 values nested 800 levels (1.6 MB)", func() (compile.Options, map[string][]byte) {
		return craftbotOf(`{"mcp_servers": [{"name": "s", "transport": "stdio", "command": "echo", "extra": [` + joinN(1000, strings.Repeat("[", 795)+"%[1]d"+strings.Repeat("]", 795)) + `]}]}`)
	}, realisticCraftbot},
	{"appsettings.json, 10000 values nested 60 levels (1.2 MB)", func() (compile.Options, map[string][]byte) {
		return volcanic.AppSettingsOf(`{"Mcp": {"Servers": {"x": {"Command": "y", "Extra": [` + joinN(10000, strings.Repeat("[", 59)+"%[1]d"+strings.Repeat("]", 59)) + `]}}}}`)
	}, realisticAppSettings},
}

func envFileOf(text string) (compile.Options, map[string][]byte) {
	return compile.Options{EnvFiles: []string{"host.env"}}, map[string][]byte{"host.env": []byte(text)}
}

func craftbotOf(text string) (compile.Options, map[string][]byte) {
	return compile.Options{Profile: "craftbot", Config: "mcp_config.json", TargetOS: "linux"}, map[string][]byte{"mcp_config.json": []byte(text)}
}

// joinN joins n copies of format, each given its index, with ", ".
func joinN(n int, format string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

// fill writes entries (each given its index) separated by sep until the
// text reaches size bytes.
func fill(size int, head, sep, tail string, entry func(i int) string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; b.Len() < size-len(tail); i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(entry(i))
	}
	b.WriteString(tail)
	return b.String()
}

// realisticEnvFile: host servers set by variables, four each.
func realisticEnvFile(size int) (compile.Options, map[string][]byte) {
	return envFileOf(fill(size, "", "", "", func(i int) string {
		name := fmt.Sprintf("env-%06d", i)
		return "Mcp__Servers__" + name + "__Command=uvx\nMcp__Servers__" + name + "__Args__0=mcp-server-" + name +
			"\nMcp__Servers__" + name + "__Env__REGION=eu-west-1\nMcp__Servers__" + name + "__IdleTimeoutSeconds=600\n"
	}))
}

// realisticSettings: servers of settings.json with every field set, one a
// line.
func realisticSettings(size int) (compile.Options, map[string][]byte) {
	return volcanic.SettingsOf(fill(size, "{\"mcpServers\": {\n", ",\n", "\n}}\n", func(i int) string {
		return fmt.Sprintf(`"user-%06d": {"command": "node", "args": ["/opt/mcp/server-%d.js", "--stdio"], "cwd": "${workspace}/tmp", "env": {"DEBUG": null, "HOME_DIR": "${workspace}"}, "toolPrefix": "u%d-", "enabled": true, "parallel": true, "startupTimeoutSeconds": 45, "callTimeoutSeconds": 300, "idleTimeoutSeconds": 0, "stderrLevel": "error", "promptSection": null}`, i, i, i)
	}))
}

// realisticAppSettings: host servers of appsettings.json, one a line.
func realisticAppSettings(size int) (compile.Options, map[string][]byte) {
	return volcanic.AppSettingsOf(fill(size, "{\"Mcp\": {\"Servers\": {\n", ",\n", "\n}}}\n", func(i int) string {
		return fmt.Sprintf(`"host-%06d": {"Command": "npx", "Args": ["-y", "@scope/server-%d@1.2.3"], "Env": {"LOG_LEVEL": "info"}, "ToolPrefix": "h%d_", "StartupTimeoutSeconds": 30, "StderrLevel": "Warning"}`, i, i, i)
	}))
}

// realisticCraftbot: entries of mcp_config.json, one a line.
func realisticCraftbot(size int) (compile.Options, map[string][]byte) {
	return craftbotOf(fill(size, "{\"auto_connect\": true, \"mcp_servers\": [\n", ",\n", "\n]}\n", func(i int) string {
		return fmt.Sprintf(`{"name": "s%d", "transport": "stdio", "command": "npx", "args": ["-y", "pkg-%d"], "env": {"REGION": "eu-west-1", "LOG_LEVEL": "info"}, "enabled": true}`, i, i)
	}))
}

// validateCost compiles and prints the text report as `mcpc validate`
// does, and returns the CPU time it took (the process's, the collector's
// included) and the largest heap meanwhile.
func validateCost(b *testing.B, opts compile.Options) (time.Duration, uint64) {
	b.Helper()
	runtime.GC()
	start := testservers.ProcessCPU()
	peak := volcanic.PeakHeap(func() {
		res, err := compile.Compile(opts)
		if err != nil {
			b.Fatal(err)
		}
		p, err := report.New("text", report.Options{Sources: res.Files})
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Print(io.Discard, res.Diagnostics); err != nil {
			b.Fatal(err)
		}
	})
	return testservers.ProcessCPU() - start, peak
}

// BenchmarkAdversarial runs each adversarial input and the realistic one
// of its size alternately; x-realistic is the ratio of their CPU times,
// heap-x-realistic of their peak heaps.
func BenchmarkAdversarial(b *testing.B) {
	for _, c := range adversarialCases {
		b.Run(c.name, func(b *testing.B) {
			badOpts, badFiles := c.bad()
			likeOpts, likeFiles := c.like(volcanic.InputBytes(badFiles))
			for _, o := range []struct {
				opts  *compile.Options
				files map[string][]byte
			}{{&badOpts, badFiles}, {&likeOpts, likeFiles}} {
				o.opts.CleanEnv, o.opts.AgentDir, o.opts.ReadFile = true, "agent", volcanic.FakeFS(o.files)
			}
			var bad, like time.Duration
			var badPeak, likePeak uint64
			for b.Loop() {
				t, p := validateCost(b, badOpts)
				bad, badPeak = bad+t, max(badPeak, p)
				t, p = validateCost(b, likeOpts)
				like, likePeak = like+t, max(likePeak, p)
			}
			b.ReportMetric(float64(bad.Milliseconds())/float64(b.N), "cpu-ms-adversarial")
			b.ReportMetric(float64(like.Milliseconds())/float64(b.N), "cpu-ms-realistic")
			b.ReportMetric(float64(bad)/float64(like), "x-realistic")
			b.ReportMetric(float64(badPeak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(badPeak)/float64(likePeak), "heap-x-realistic")
			b.ReportMetric(float64(volcanic.InputBytes(badFiles))/(1<<20), "input-MB")
		})
	}
}
