package plan

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// serverWriter writes a volcanic plan's servers as encoding/json with
// SetIndent("    ", "  ") writes them, without encoding/json's reflection
// and its second pass that indents what it encoded compact (its cost:
// docs/performance.md, "What the plan encoder and packed trees are for"). Strings that need escaping go through
// encoding/json itself, so that every byte stays what it wrote;
// TestServerWriterWritesAsEncodingJSON holds the two equal.
type serverWriter struct {
	buf []byte
	// escaped encodes a string that needs escaping.
	escaped bytes.Buffer
	enc     *json.Encoder
	keys    []string
}

func newServerWriter() *serverWriter {
	w := &serverWriter{}
	w.enc = json.NewEncoder(&w.escaped)
	w.enc.SetEscapeHTML(false)
	return w
}

// The indentation of a server's fields and of the values inside them.
const (
	fieldIndent = "\n      "
	valueIndent = "\n        "
	closeField  = "\n      "
	closeServer = "\n    }"
)

// server returns s encoded, valid until the next call.
func (w *serverWriter) server(s *Server) ([]byte, error) {
	b := append(w.buf[:0], '{')
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, fieldIndent...)
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `": `...)
	}
	var err error
	str := func(v string) {
		if err == nil {
			b, err = w.appendString(b, v)
		}
	}
	if s.ActionSet != "" {
		field("actionSet")
		str(s.ActionSet)
	}
	field("args")
	switch {
	case s.Args == nil:
		b = append(b, "null"...)
	case len(s.Args) == 0:
		b = append(b, "[]"...)
	default:
		b = append(b, '[')
		for i, a := range s.Args {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, valueIndent...)
			str(a)
		}
		b = append(b, closeField...)
		b = append(b, ']')
	}
	field("callTimeoutSeconds")
	b = strconv.AppendInt(b, int64(s.CallTimeoutSeconds), 10)
	if s.CannotStart != "" {
		field("cannotStart")
		str(s.CannotStart)
	}
	field("command")
	str(s.Command)
	field("cwd")
	str(s.Cwd)
	if s.Description != "" {
		field("description")
		str(s.Description)
	}
	field("enabled")
	b = strconv.AppendBool(b, s.Enabled)
	field("env")
	switch {
	case s.Env == nil:
		b = append(b, "null"...)
	case len(s.Env) == 0:
		b = append(b, "{}"...)
	default:
		w.keys = w.keys[:0]
		for k := range s.Env {
			w.keys = append(w.keys, k)
		}
		slices.Sort(w.keys)
		b = append(b, '{')
		for i, k := range w.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, valueIndent...)
			str(k)
			b = append(b, ": "...)
			if v := s.Env[k]; v == nil {
				b = append(b, "null"...)
			} else {
				str(*v)
			}
		}
		b = append(b, closeField...)
		b = append(b, '}')
	}
	field("idleTimeoutSeconds")
	b = strconv.AppendInt(b, int64(s.IdleTimeoutSeconds), 10)
	field("name")
	str(s.Name)
	field("origin")
	b = append(b, '{')
	b = append(b, valueIndent+`"column": `...)
	b = strconv.AppendInt(b, int64(s.Origin.Column), 10)
	if s.Origin.Key != "" {
		b = append(b, ","+valueIndent+`"key": `...)
		str(s.Origin.Key)
	}
	b = append(b, ","+valueIndent+`"line": `...)
	b = strconv.AppendInt(b, int64(s.Origin.Line), 10)
	b = append(b, ","+valueIndent+`"path": `...)
	str(s.Origin.Path)
	b = append(b, ","+valueIndent+`"source": `...)
	str(s.Origin.Source)
	b = append(b, closeField...)
	b = append(b, '}')
	field("parallel")
	b = strconv.AppendBool(b, s.Parallel)
	field("promptSection")
	if s.PromptSection == nil {
		b = append(b, "null"...)
	} else {
		str(*s.PromptSection)
	}
	field("startupTimeoutSeconds")
	b = strconv.AppendInt(b, int64(s.StartupTimeoutSeconds), 10)
	field("stderrLevel")
	str(s.StderrLevel)
	field("toolPrefix")
	str(s.ToolPrefix)
	field("transport")
	str(s.Transport)
	if s.URL != "" {
		field("url")
		str(s.URL)
	}
	b = append(b, closeServer...)
	w.buf = b
	return b, err
}

// appendString appends v as a JSON string: as it is when encoding/json
// would write it so (printable ASCII but " and \), else as encoding/json
// writes it.
func (w *serverWriter) appendString(b []byte, v string) ([]byte, error) {
	plain := true
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, v...)
		return append(b, '"'), nil
	}
	w.escaped.Reset()
	if err := w.enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(w.escaped.Bytes(), []byte("\n"))...), nil
}
