package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SecretForms returns the forms of a secret value to redact: the value
// itself and its JSON escaping without HTML escaping, as JavaScript's
// JSON.stringify and most servers write it (New adds Go's JSON escaping of
// each form).
func SecretForms(s string) []string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return []string{s}
	}
	b := bytes.TrimSpace(buf.Bytes())
	return []string{s, string(b[1 : len(b)-1])}
}

// JSON returns the JSON text data with redact applied to every string
// it holds, object keys included, each decoded string on its own. Object
// members keep their order and numbers stay as written; the result is
// compact. changed reports whether any string changed.
//
// Working on decoded strings, rather than on the JSON text, catches a
// secret that a string holds in escaped form (a tool that answers with JSON
// text: encoding the result escapes it twice), and keeps the result valid
// JSON whatever the secret contains.
//
// On error the caller must withhold what it meant to show: never fall back
// to the unredacted data.
func JSON(data []byte, redact func(string) string) (out []byte, changed bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var b bytes.Buffer
	b.Grow(len(data))
	// One frame per open object or array: its kind, and the number of
	// tokens written in it so far (keys and values both count).
	type frame struct {
		object bool
		n      int
	}
	var stack []frame
	writeString := func(s string) error {
		r := redact(s)
		if r != s {
			changed = true
		}
		enc, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(enc)
		return nil
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, err
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			if len(stack) == 0 {
				return nil, false, errors.New("unbalanced JSON")
			}
			stack = stack[:len(stack)-1]
			b.WriteByte(byte(d))
			continue
		}
		// A separator before this token, if it is not the first of its
		// container: ',' between members or elements, ':' after a key.
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			switch {
			case top.n == 0:
			case top.object && top.n%2 == 1:
				b.WriteByte(':')
			default:
				b.WriteByte(',')
			}
			top.n++
		} else if b.Len() > 0 {
			return nil, false, errors.New("more than one JSON value")
		}
		switch t := tok.(type) {
		case json.Delim:
			b.WriteByte(byte(t))
			stack = append(stack, frame{object: t == '{'})
		case string:
			if err := writeString(t); err != nil {
				return nil, false, err
			}
		case json.Number:
			b.WriteString(string(t))
		case bool:
			if t {
				b.WriteString("true")
			} else {
				b.WriteString("false")
			}
		case nil:
			b.WriteString("null")
		default:
			return nil, false, errors.New("unexpected JSON token")
		}
	}
	if len(stack) != 0 || b.Len() == 0 {
		return nil, false, errors.New("incomplete JSON")
	}
	return b.Bytes(), changed, nil
}

// Value returns v with redact applied to every string it holds, in
// dst: v is encoded to JSON, redacted by JSON and decoded into dst (a
// pointer). changed reports whether any string changed. On error dst must
// not be used, and v must not be shown either.
func Value(v, dst any, redact func(string) string) (changed bool, err error) {
	data, err := json.Marshal(v)
	if err != nil {
		return false, err
	}
	red, changed, err := JSON(data, redact)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(red, dst); err != nil {
		return false, err
	}
	return changed, nil
}

// Result returns res with every known secret replaced by [REDACTED]
// in every string it holds: text content, embedded resources, resource
// links, structured content (keys too) and _meta, each decoded string on
// its own (see JSON). When nothing changed, res is returned as is.
// A result that cannot be redacted is withheld: replaced by an error
// result that says so.
func Result(res *mcp.CallToolResult, redact func(string) string) *mcp.CallToolResult {
	if res == nil {
		return nil
	}
	var out mcp.CallToolResult
	changed, err := Value(res, &out, redact)
	if err != nil {
		return WithheldResult()
	}
	if !changed {
		return res
	}
	return &out
}

// WithheldResult replaces a result that may hold a secret mcpc could not
// take out: better no result than a leaked secret.
func WithheldResult() *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
		Text: "the tool result was withheld: it may hold a secret value that mcpc could not redact"}}}
}

// Tool returns a copy of the tool definition t with redact applied to
// every string it holds: title, description, input and output schemas
// (a server could put a secret in a default or an example), annotations
// and _meta. The name is kept: callers rename the copy. On error the
// definition must not be offered.
func Tool(t *mcp.Tool, redact func(string) string) (*mcp.Tool, error) {
	var out mcp.Tool
	if _, err := Value(t, &out, redact); err != nil {
		return nil, err
	}
	out.Name = t.Name
	return &out, nil
}
