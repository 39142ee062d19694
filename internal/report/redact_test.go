package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Options.Redact is applied to every message and suggestion in every
// format, and the caller's diagnostics stay as they were.
func TestPrintersRedact(t *testing.T) {
	const secret = "tok-4f1e-99ab"
	ds := []diag.Diagnostic{rules.TypeMismatch.At(diag.Pos{File: "a.json", Line: 1, Column: 1},
		"value "+secret+" does not convert", "not "+secret)}
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }
	for _, f := range Formats {
		p, err := New(f, Options{Redact: redact})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := p.Print(&b, ds); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), secret) || !strings.Contains(b.String(), "[REDACTED]") {
			t.Errorf("%s:\n%s", f, b.String())
		}
	}
	if !strings.Contains(ds[0].Message, secret) {
		t.Errorf("the caller's diagnostic was changed: %q", ds[0].Message)
	}
}

// Redaction copies the run only from the first diagnostic it changes: the
// others print as they are, and the caller's diagnostics stay as they were.
func TestRedactChangesACopy(t *testing.T) {
	const secret = "tok-4f1e-99ab"
	at := diag.Pos{File: "a.json", Line: 1, Column: 1}
	ds := []diag.Diagnostic{rules.TypeMismatch.At(at, "plain", ""), rules.TypeMismatch.At(at, "value "+secret, "")}
	p, err := New("text", Options{Redact: func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.Print(&b, ds); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, secret) || !strings.Contains(out, "value [REDACTED]") || !strings.Contains(out, "plain") {
		t.Errorf("report:\n%s", out)
	}
	if ds[1].Message != "value "+secret {
		t.Errorf("the caller's diagnostic was changed: %q", ds[1].Message)
	}
}
