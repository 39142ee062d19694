package plan

import (
	"fmt"
	"io"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// BenchmarkWriteCanonical writes the canonical JSON of a plan of 10 000
// servers shaped like bench/validate.sh's (every field set): what Seal
// and `mcpc plan -o` each do once (docs/performance.md, "The plan's encoding").
func BenchmarkWriteCanonical(b *testing.B) {
	info, section := "info", "Use these tools."
	p := &Plan{PlanVersion: Version, Profile: "volcanic", Shadowed: []Shadowed{}, Sources: []SourceRef{{Kind: "appsettings", Path: "appsettings.json"}}}
	for i := range 10000 {
		p.Servers = append(p.Servers, Server{
			Args: []string{"-y", fmt.Sprintf("@scope/server-%d@1.2.3", i), "--root", "${workspace}/data"}, CallTimeoutSeconds: 120,
			Command: "npx", Cwd: "${workspace}", Enabled: true, Env: map[string]*string{"LOG_LEVEL": &info, "REGION": &info, "DEBUG": nil},
			IdleTimeoutSeconds: 600, Name: fmt.Sprintf("host-%06d", i),
			Origin:        Origin{Column: 3, Key: fmt.Sprintf("Mcp__Servers__host-%06d__Command", i), Line: i + 2, Path: "/deploy/appsettings.json", Source: "appsettings"},
			PromptSection: &section, StartupTimeoutSeconds: 30, StderrLevel: "Warning", ToolPrefix: fmt.Sprintf("h%d_", i), Transport: "stdio",
		})
	}
	cpu := testservers.ProcessCPU()
	for b.Loop() {
		if err := p.WriteCanonical(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	// CPU, not the time it took: the machine may be shared.
	b.ReportMetric(float64((testservers.ProcessCPU()-cpu).Nanoseconds())/float64(b.N)/1e4, "cpu-ns/server")
}
