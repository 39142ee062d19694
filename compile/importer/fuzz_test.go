package importer_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/importer"
	"github.com/mcpc-dev/mcpc/internal/report"
)

// FuzzImport feeds any bytes to every client and target: no panic; an
// output only without errors, and then one the target accepts; every
// diagnostic positioned in the file; no literal credential in a report.
func FuzzImport(f *testing.F) {
	for _, c := range importCases(f) {
		f.Add(c.data, uint8(0))
	}
	f.Add([]byte(`{"mcpServers":{"a b":{"command":"x","args":["${A:-${B}}"],"env":{"T_TOKEN":"${"}}}}`), uint8(3))
	f.Add([]byte(`{"servers":{"s":{"type":"http","url":"https://u:p@h/x?k=v","headers":{"A":1}}},"inputs":[{"id":"x"}]}`), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		opts := importer.Options{
			From: importer.Clients[int(pick)%len(importer.Clients)],
			To:   importer.Targets[int(pick/4)%len(importer.Targets)],
		}
		if opts.To == importer.Volcanic && pick&8 != 0 {
			opts.Form = importer.FormAppSettings
		}
		const file = "in.json"
		res, err := importer.Import(file, data, opts)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, d := range res.Diagnostics {
			if d.File != file || d.Line < 1 || d.Line > lines || d.Column < 1 {
				t.Fatalf("diagnostic not positioned in the file: %+v", d)
			}
		}
		// What converts is written; no output is an error, and an error
		// beside an output is a server left out of it.
		if res.Output == nil && !res.HasErrors() || res.Output != nil && res.HasErrors() && res.Failed == 0 {
			t.Fatalf("errors %v, %d servers left out, output %q", res.HasErrors(), res.Failed, res.Output)
		}
		if res.Output != nil {
			checkOutput(t, res.Output, opts)
		}
		p, _ := report.New("json", report.Options{Sources: res.Excerpts(file, data), Redact: res.Redact})
		var buf bytes.Buffer
		if err := p.Print(&buf, res.Diagnostics); err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Secrets {
			if len(s) >= 8 && strings.Contains(buf.String(), s) {
				t.Fatalf("the report shows a secret %q:\n%s", s, buf.String())
			}
		}
	})
}
