package remote

import (
	"errors"
	"fmt"
	"strings"
)

// Edits return the new content of servers.json; WriteFile writes it. Only
// the entries an edit is about change: every other entry keeps its bytes,
// and so does everything outside the servers list.

// ErrNotEditable is returned for a file that cannot be edited as a whole
// (File.Problem is set).
var ErrNotEditable = errors.New("servers.json cannot be edited")

// RenderEntry writes one entry as a single line of JSON, in the field order
// of SPEC §3.
func RenderEntry(s Server, sealed string) []byte {
	var b strings.Builder
	field := func(key string, first bool) {
		if !first {
			b.WriteString(", ")
		}
		jcsString(&b, key)
		b.WriteString(": ")
	}
	b.WriteByte('{')
	field("name", true)
	jcsString(&b, s.Name)
	field("url", false)
	jcsString(&b, s.URL)
	field("transport", false)
	jcsString(&b, s.Transport)
	field("tools", false)
	jcsList(&b, s.Tools, ", ")
	field("auth", false)
	jcsString(&b, s.Auth)
	field("sealed", false)
	jcsString(&b, sealed)
	b.WriteByte('}')
	return []byte(b.String())
}

func (f *File) editable() error {
	if f.Problem != "" {
		return fmt.Errorf("%w: %s; fix it or delete the file", ErrNotEditable, f.Problem)
	}
	return nil
}

// item is one element of the servers list after an edit: original element
// orig (>= 0), or new text; slot is the original element whose place it
// takes (-1 for an appended one).
type item struct {
	orig int
	slot int
	text []byte
}

// WithEntry returns the content with entry (s, sealed) in place of the
// first entry named s.Name (later entries of that name are dropped), or
// appended when there is none.
func (f *File) WithEntry(s Server, sealed string) ([]byte, error) {
	text := RenderEntry(s, sealed)
	if !f.Exists {
		return []byte("{\n  \"version\": 1,\n  \"servers\": [\n    " + string(text) + "\n  ]\n}\n"), nil
	}
	if err := f.editable(); err != nil {
		return nil, err
	}
	var items []item
	done := false
	for i, e := range f.Entries {
		switch {
		case e.Name != s.Name:
			items = append(items, item{orig: i, slot: i})
		case !done:
			items = append(items, item{orig: -1, slot: i, text: text})
			done = true
		}
	}
	if !done {
		items = append(items, item{orig: -1, slot: -1, text: text})
	}
	return f.rebuild(items), nil
}

// Without returns the content without the entries named name, and how many
// there were.
func (f *File) Without(name string) ([]byte, int, error) {
	if !f.Exists {
		return nil, 0, nil
	}
	if err := f.editable(); err != nil {
		return nil, 0, err
	}
	var items []item
	n := 0
	for i, e := range f.Entries {
		if e.Name == name {
			n++
			continue
		}
		items = append(items, item{orig: i, slot: i})
	}
	return f.rebuild(items), n, nil
}

// rebuild writes the file with the servers list holding items. Original
// elements keep their bytes; an element keeps the separator that preceded
// its place; appended elements take the separator of the list's last one.
func (f *File) rebuild(items []item) []byte {
	d := f.Data
	n := len(f.Entries)
	open, closing := f.arrStart, f.arrEnd-1 // offsets of [ and ]
	var b strings.Builder
	b.Write(d[:open+1])
	switch {
	case len(items) == 0:
		b.Write(d[closing:])
		return []byte(b.String())
	case n == 0:
		// An empty list: one element per line, indented below "servers".
		b.WriteString("\n" + f.keyIndent + "  ")
		for i, it := range items {
			if i > 0 {
				b.WriteString(",\n" + f.keyIndent + "  ")
			}
			b.Write(it.text)
		}
		b.WriteString("\n" + f.keyIndent)
		b.Write(d[closing:])
		return []byte(b.String())
	}
	// sepBefore(j) is what precedes original element j (j >= 1).
	sepBefore := func(j int) string { return string(d[f.Entries[j-1].end:f.Entries[j].start]) }
	appendSep := "," + string(d[open+1:f.Entries[0].start])
	if n >= 2 {
		appendSep = sepBefore(n - 1)
	}
	b.Write(d[open+1 : f.Entries[0].start]) // what precedes the first element
	for k, it := range items {
		if k > 0 {
			if it.slot >= 1 {
				b.WriteString(sepBefore(it.slot))
			} else {
				b.WriteString(appendSep)
			}
		}
		if it.orig >= 0 {
			e := f.Entries[it.orig]
			b.Write(d[e.start:e.end])
		} else {
			b.Write(it.text)
		}
	}
	b.Write(d[f.Entries[n-1].end:])
	return []byte(b.String())
}
