package volcanic

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/report"
)

// deployment builds a deployment of n servers split across the three kinds
// of source: the host's appsettings file, the host environment, and
// settings.json (plus the Playwright preset), one server per line.
func deployment(n int) (compile.Options, map[string][]byte) {
	return deploymentShaped(n, layout{})
}

// layout shapes the files deploymentShaped writes: minified puts each file
// on one line (as generated configurations are), warn gives every server
// one unknown field, so that every server costs a diagnostic.
type layout struct{ minified, warn bool }

func deploymentShaped(n int, l layout) (compile.Options, map[string][]byte) {
	nl := "\n"
	if l.minified {
		nl = ""
	}
	var app, settings strings.Builder
	var env []string
	if !l.minified {
		app.WriteString("// generated\n")
	}
	app.WriteString("{\"Mcp\": {\"Playwright\": {\"Enabled\": true}, \"Servers\": {" + nl)
	settings.WriteString("{\"mcpServers\": {" + nl)
	firstApp, firstSettings := true, true
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			if !firstApp {
				app.WriteString("," + nl)
			}
			firstApp = false
			fmt.Fprintf(&app, `"host-%05d": {"Command": "npx", "Args": ["-y", "@scope/server-%d@1.0.0", "${workspace}"], "Env": {"TOKEN": "${env:GITHUB_TOKEN}", "MODE": "fast"}, "ToolPrefix": "h%d_", "StartupTimeoutSeconds": 30, "StderrLevel": "warning",`, i, i, i)
			if l.warn {
				app.WriteString(` "StderLevel": "info",`)
			}
			app.WriteString("}")
		case 1:
			name := fmt.Sprintf("env-%05d", i)
			env = append(env,
				"Mcp__Servers__"+name+"__Command=uvx",
				"Mcp__Servers__"+name+"__Args__0=mcp-server-"+name,
				"Mcp__Servers__"+name+"__Env__REGION=eu",
				"Mcp__Servers__"+name+"__IdleTimeoutSeconds=0")
			if l.warn {
				env = append(env, "Mcp__Servers__"+name+"__IdleTimeout=0")
			}
		case 2:
			if !firstSettings {
				settings.WriteString("," + nl)
			}
			firstSettings = false
			fmt.Fprintf(&settings, `"user-%05d": {"command": "node", "args": ["server-%d.js"], "env": {"DEBUG": null, "HOME_DIR": "${workspace}"}, "parallel": true, "callTimeoutSeconds": 300`, i, i)
			if l.warn {
				settings.WriteString(`, "comand": "node"`)
			}
			settings.WriteString("}")
		}
	}
	app.WriteString("}}}" + nl)
	settings.WriteString("}}" + nl)
	files := map[string][]byte{
		"appsettings.json":                      []byte(app.String()),
		filepath.Join("agent", "settings.json"): []byte(settings.String()),
	}
	env = append(env, "GITHUB_TOKEN=bench-token-value")
	return compile.Options{CleanEnv: true, AppSettings: []string{"appsettings.json"}, Env: env, AgentDir: "agent", ReadFile: fakeFS(files)}, files
}

// peakHeap samples the live heap while f runs and returns its maximum.
func peakHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				read()
			}
		}
	}()
	f()
	read()
	close(done)
	wg.Wait()
	return peak.Load()
}

// benchCase is one shape of input for the benchmarks below.
type benchCase struct {
	n int
	l layout
}

func (c benchCase) name() string {
	name := fmt.Sprintf("servers=%d", c.n)
	if c.l.minified {
		name += ",minified"
	}
	if c.l.warn {
		name += ",warn"
	}
	return name
}

// inputBytes is the size of the files a deployment reads.
func inputBytes(files map[string][]byte) int {
	n := 0
	for _, b := range files {
		n += len(b)
	}
	return n
}

// setupBench compiles c once and checks that it gives every server, and a
// warning per server when asked.
func setupBench(b *testing.B, c benchCase) (compile.Options, map[string][]byte, *compile.Result) {
	b.Helper()
	opts, files := deploymentShaped(c.n, c.l)
	res, err := compile.Compile(opts)
	if err != nil || res.Plan == nil || len(res.Plan.Servers) != c.n+1 {
		b.Fatalf("setup: %v %v", err, res.Diagnostics)
	}
	want := 0
	if c.l.warn {
		want = c.n
	}
	if len(res.Diagnostics) != want {
		b.Fatalf("setup: %d diagnostics, want %d", len(res.Diagnostics), want)
	}
	return opts, files, res
}

// BenchmarkCompile compiles deployments one server per line (the existing
// cases) and minified, with and without a warning per server. Position
// lookup must not depend on the length of the line: minified input costs
// about what pretty-printed input costs, and the cost per server stays flat
// from 10 000 to 50 000 servers. peak-heap-MB is the largest heap (live
// objects and those not yet swept) sampled every millisecond during one
// Compile, each from a collected heap; input-MB is the size of the files
// read.
func BenchmarkCompile(b *testing.B) {
	cases := []benchCase{{n: 10}, {n: 1000}, {n: 10000}}
	for _, n := range []int{10000, 50000} {
		for _, l := range []layout{{warn: true}, {minified: true}, {minified: true, warn: true}} {
			cases = append(cases, benchCase{n, l})
		}
	}
	cases = append(cases, benchCase{n: 50000})
	for _, c := range cases {
		b.Run(c.name(), func(b *testing.B) {
			opts, files, _ := setupBench(b, c)
			var peak uint64
			for b.Loop() {
				// Each Compile starts from a collected heap: the Result of
				// the one before, dead but not yet swept, and the heap goal
				// its collections set, belong to the benchmark's loop, not
				// to the compilation measured.
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
				p := peakHeap(func() {
					if _, err := compile.Compile(opts); err != nil {
						b.Fatal(err)
					}
				})
				peak = max(peak, p)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.n), "ns/server")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(inputBytes(files))/(1<<20), "input-MB")
		})
	}
}

// BenchmarkTextReport prints the text report (header, excerpt, caret,
// suggestion) of a warning per server, as `mcpc validate` does, with the
// sources of the compile (which redact the deployment's token). On a
// minified file every excerpt comes from the same long line: each must
// cost the window it shows, not the line: FileSet.Line redacts only the
// window of a long line (report.BenchmarkTextReportLongLine measures the
// printer alone on such a line).
func BenchmarkTextReport(b *testing.B) {
	var cases []benchCase
	for _, n := range []int{1000, 10000, 50000} {
		cases = append(cases, benchCase{n, layout{warn: true}}, benchCase{n, layout{minified: true, warn: true}})
	}
	for _, c := range cases {
		b.Run(c.name(), func(b *testing.B) {
			_, _, res := setupBench(b, c)
			p, err := report.New("text", report.Options{Sources: res.Files})
			if err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			var peak uint64
			b.ResetTimer()
			for b.Loop() {
				p := peakHeap(func() {
					if err := p.Print(io.Discard, res.Diagnostics); err != nil {
						b.Fatal(err)
					}
				})
				peak = max(peak, p)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(res.Diagnostics)), "ns/diagnostic")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}
