// Package plan is the frozen launch plan (SPEC §6), the contract between the
// compiler and the runtime: its types, its canonical JSON and digest, reading
// a plan file back, and what a runtime needs to launch from it (the ${…}
// templates of its values and the environment a server gets). The compiler
// writes plans; the runtime reads them and never imports the compiler.
package plan

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
)

// Version is the version of the plan format this mcpc writes and reads.
const Version = 1

// The profiles a plan can be of (SPEC §8 --profile).
const (
	ProfileVolcanic = "volcanic"
	ProfileCraftbot = "craftbot"
)

// The transports a plan's server can have: a volcanic plan's servers are
// stdio ones; a craftbot plan's are any of the three.
const (
	TransportStdio     = "stdio"
	TransportSSE       = "sse"
	TransportWebsocket = "websocket"
)

// Plan is the frozen launch plan (SPEC §6): what a runtime starts, in merge
// order, with every default filled in. Env values and cwd stay templates, so
// a plan never holds a resolved secret.
//
// The fields of the plan's types are declared in the sorted order of their
// JSON keys, so that encoding/json writes canonical JSON directly (a test
// checks this against a generic re-encoding).
//
// A craftbot plan has fields a volcanic plan has not (autoConnect, skipped;
// a server's actionSet, description and url) and lacks some it has (cwd,
// the timeouts, toolPrefix …): Canonical writes it through craftbotPlan,
// its own view. The craftbot fields are omitempty here, so that a volcanic
// plan's bytes do not change (docs/decisions/0031-craftbot-profile.md).
type Plan struct {
	// AutoConnect (craftbot): enabled servers connect at startup.
	AutoConnect *bool       `json:"autoConnect,omitempty"`
	Digest      string      `json:"digest,omitempty"`
	PlanVersion int         `json:"planVersion"`
	Profile     string      `json:"profile"`
	Servers     []Server    `json:"servers"`
	Shadowed    []Shadowed  `json:"shadowed"`
	Skipped     []Skipped   `json:"skipped,omitempty"` // craftbot
	Sources     []SourceRef `json:"sources"`
}

// Skipped (craftbot) is an entry the host skips because it fails
// validation; Rule is the rule id that says why.
type Skipped struct {
	Name   string `json:"name"`
	Origin Origin `json:"origin"`
	Rule   string `json:"rule"`
}

// SourceRef is one source the compiler read, in precedence order.
type SourceRef struct {
	Kind string `json:"kind"` // appsettings, environment, env-file, env, preset, settings
	Path string `json:"path,omitempty"`
}

// Origin is where a server was defined.
type Origin struct {
	Column int `json:"column"`
	// Key is the environment variable that defined the server, when one did.
	Key    string `json:"key,omitempty"`
	Line   int    `json:"line"`
	Path   string `json:"path"`
	Source string `json:"source"` // appsettings, environment, env-file, env, preset, settings
}

func (o Origin) String() string {
	s := o.Source
	if o.Path != "" {
		s += " " + o.Path
		if o.Line > 0 {
			s += fmt.Sprintf(":%d:%d", o.Line, o.Column)
		}
	}
	if o.Key != "" {
		s += " (" + o.Key + ")"
	}
	return s
}

// Server is one server of the plan.
//
// ActionSet, Description and URL belong to craftbot plans (omitted from
// volcanic ones). In a craftbot plan, Command and Args are literal (the host
// expands no ${…}), and every Env value is "" or ConfigRef(key).
type Server struct {
	ActionSet          string   `json:"actionSet,omitempty"`
	Args               []string `json:"args"`
	CallTimeoutSeconds int      `json:"callTimeoutSeconds"`
	// CannotStart (craftbot) says why the host loads this server but its
	// start always fails; a runtime reports it as failed without starting it.
	CannotStart           string             `json:"cannotStart,omitempty"`
	Command               string             `json:"command"`
	Cwd                   string             `json:"cwd"`
	Description           string             `json:"description,omitempty"`
	Enabled               bool               `json:"enabled"`
	Env                   map[string]*string `json:"env"`
	IdleTimeoutSeconds    int                `json:"idleTimeoutSeconds"`
	Name                  string             `json:"name"`
	Origin                Origin             `json:"origin"`
	Parallel              bool               `json:"parallel"`
	PromptSection         *string            `json:"promptSection"`
	StartupTimeoutSeconds int                `json:"startupTimeoutSeconds"`
	StderrLevel           string             `json:"stderrLevel"`
	ToolPrefix            string             `json:"toolPrefix"`
	Transport             string             `json:"transport"`
	URL                   string             `json:"url,omitempty"`
}

// Shadowed is a definition dropped because an earlier source defined the
// same name.
type Shadowed struct {
	Name   string `json:"name"`
	Origin Origin `json:"origin"`
	Winner Origin `json:"winner"`
}

// Canonical returns the plan's canonical JSON: two-space indent, object keys
// sorted, no HTML escaping, a trailing newline. Identical plans give
// identical bytes.
func (p *Plan) Canonical() ([]byte, error) {
	if p.Profile == ProfileCraftbot {
		return encodeCanonical(p.craftbotView())
	}
	return p.streamCanonical()
}

// WriteCanonical writes the bytes Canonical gives to w. A volcanic plan is
// written one server at a time, never whole in memory: hashing a plan for
// its digest needs no copy of its encoding.
func (p *Plan) WriteCanonical(w io.Writer) error {
	if p.Profile == ProfileCraftbot {
		b, err := encodeCanonical(p.craftbotView())
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	bw := bufio.NewWriter(w)
	if err := p.writeCanonical(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// encodeCanonical encodes v the way plans are encoded.
func encodeCanonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// streamCanonical writes the bytes encodeCanonical(p) gives, one server at
// a time into one buffer: encoding/json would build the whole plan compact,
// then indented, then copy it out, three buffers each grown by doubling —
// most of the peak memory of a 50 000-server compile.
// TestCanonicalStreamsAsEncodingJSON holds the two equal.
func (p *Plan) streamCanonical() ([]byte, error) {
	var out bytes.Buffer
	if err := p.writeCanonical(&out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// canonicalWriter is what writeCanonical writes to: a bytes.Buffer or a
// bufio.Writer.
type canonicalWriter interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
}

// writeCanonical writes streamCanonical's bytes to out.
func (p *Plan) writeCanonical(out canonicalWriter) error {
	var scratch bytes.Buffer
	enc := json.NewEncoder(&scratch)
	enc.SetEscapeHTML(false)
	enc.SetIndent("  ", "  ")
	// value writes v at the indentation of a top-level value.
	value := func(v any) error {
		scratch.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		out.Write(bytes.TrimSuffix(scratch.Bytes(), []byte("\n")))
		return nil
	}
	out.WriteString("{\n")
	if p.AutoConnect != nil {
		out.WriteString(`  "autoConnect": `)
		if err := value(p.AutoConnect); err != nil {
			return err
		}
		out.WriteString(",\n")
	}
	if p.Digest != "" {
		out.WriteString(`  "digest": `)
		if err := value(p.Digest); err != nil {
			return err
		}
		out.WriteString(",\n")
	}
	fmt.Fprintf(out, "  \"planVersion\": %d,\n", p.PlanVersion)
	out.WriteString(`  "profile": `)
	if err := value(p.Profile); err != nil {
		return err
	}
	out.WriteString(",\n  \"servers\": ")
	switch {
	case p.Servers == nil:
		out.WriteString("null")
	case len(p.Servers) == 0:
		out.WriteString("[]")
	default:
		sw := newServerWriter()
		out.WriteString("[\n")
		for i := range p.Servers {
			out.WriteString("    ")
			b, err := sw.server(&p.Servers[i])
			if err != nil {
				return err
			}
			out.Write(b)
			if i < len(p.Servers)-1 {
				out.WriteByte(',')
			}
			out.WriteByte('\n')
		}
		out.WriteString("  ]")
	}
	out.WriteString(",\n  \"shadowed\": ")
	if err := value(p.Shadowed); err != nil {
		return err
	}
	if len(p.Skipped) > 0 {
		out.WriteString(",\n  \"skipped\": ")
		if err := value(p.Skipped); err != nil {
			return err
		}
	}
	out.WriteString(",\n  \"sources\": ")
	if err := value(p.Sources); err != nil {
		return err
	}
	_, err := out.WriteString("\n}\n")
	return err
}

// canonicalJSON re-encodes JSON with sorted keys (maps sort on encoding),
// numbers kept as written.
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Seal computes the digest: sha256 of the canonical plan without digest.
func (p *Plan) Seal() error {
	p.Digest = ""
	h := sha256.New()
	if err := p.WriteCanonical(h); err != nil {
		return err
	}
	p.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return nil
}

// CanonicalJSON encodes any value the way plans are encoded.
func CanonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return canonicalJSON(raw)
}
