package compile

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// deployment builds a deployment of n servers split across the three kinds
// of source: the host's appsettings file, the host environment, and
// settings.json (plus the Playwright preset).
func deployment(n int) (Options, map[string][]byte) {
	var app, settings strings.Builder
	var env []string
	app.WriteString("// generated\n{\"Mcp\": {\"Playwright\": {\"Enabled\": true}, \"Servers\": {\n")
	settings.WriteString("{\"mcpServers\": {\n")
	firstApp, firstSettings := true, true
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			if !firstApp {
				app.WriteString(",\n")
			}
			firstApp = false
			fmt.Fprintf(&app, `"host-%05d": {"Command": "npx", "Args": ["-y", "@scope/server-%d@1.0.0", "${workspace}"], "Env": {"TOKEN": "${env:GITHUB_TOKEN}", "MODE": "fast"}, "ToolPrefix": "h%d_", "StartupTimeoutSeconds": 30, "StderrLevel": "warning",}`, i, i, i)
		case 1:
			name := fmt.Sprintf("env-%05d", i)
			env = append(env,
				"Mcp__Servers__"+name+"__Command=uvx",
				"Mcp__Servers__"+name+"__Args__0=mcp-server-"+name,
				"Mcp__Servers__"+name+"__Env__REGION=eu",
				"Mcp__Servers__"+name+"__IdleTimeoutSeconds=0")
		case 2:
			if !firstSettings {
				settings.WriteString(",\n")
			}
			firstSettings = false
			fmt.Fprintf(&settings, `"user-%05d": {"command": "node", "args": ["server-%d.js"], "env": {"DEBUG": null, "HOME_DIR": "${workspace}"}, "parallel": true, "callTimeoutSeconds": 300}`, i, i)
		}
	}
	app.WriteString("}}}\n")
	settings.WriteString("}}\n")
	files := map[string][]byte{
		"appsettings.json":                      []byte(app.String()),
		filepath.Join("agent", "settings.json"): []byte(settings.String()),
	}
	env = append(env, "GITHUB_TOKEN=bench-token-value")
	return Options{CleanEnv: true, AppSettings: []string{"appsettings.json"}, Env: env, AgentDir: "agent", ReadFile: fakeFS(files)}, files
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

func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			opts, _ := deployment(n)
			if res, err := Compile(opts); err != nil || res.Plan == nil || len(res.Plan.Servers) != n+1 {
				b.Fatalf("setup: %v %v", err, res.Diagnostics)
			}
			runtime.GC()
			var peak uint64
			b.ResetTimer()
			for b.Loop() {
				p := peakHeap(func() {
					if _, err := Compile(opts); err != nil {
						b.Fatal(err)
					}
				})
				peak = max(peak, p)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/server")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}
