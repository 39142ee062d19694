package importer

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// jsonWriter writes indented JSON with members in a chosen order.
type jsonWriter struct {
	b     bytes.Buffer
	depth int
	first []bool // per open container: nothing written in it yet
}

func (w *jsonWriter) indent() {
	w.b.WriteByte('\n')
	for i := 0; i < w.depth; i++ {
		w.b.WriteString("  ")
	}
}

// item starts a value in the current container.
func (w *jsonWriter) item() {
	if n := len(w.first); n > 0 {
		if !w.first[n-1] {
			w.b.WriteByte(',')
		}
		w.first[n-1] = false
		w.indent()
	}
}

func (w *jsonWriter) open(c byte) {
	w.b.WriteByte(c)
	w.depth++
	w.first = append(w.first, true)
}

func (w *jsonWriter) close(c byte) {
	w.depth--
	empty := w.first[len(w.first)-1]
	w.first = w.first[:len(w.first)-1]
	if !empty {
		w.indent()
	}
	w.b.WriteByte(c)
}

func (w *jsonWriter) key(k string) {
	w.item()
	w.b.Write(quote(k))
	w.b.WriteString(": ")
}

// str writes a string value after a key (or as a list element with item).
func (w *jsonWriter) str(s string) { w.b.Write(quote(s)) }

func (w *jsonWriter) strings(list []string) {
	w.open('[')
	for _, s := range list {
		w.item()
		w.str(s)
	}
	w.close(']')
}

// quote encodes s as a JSON string, without escaping <, > and & (the output
// is a file, not HTML).
func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// write renders the converted entries in the target's file format.
func (c *converter) write(es []*entry) []byte {
	w := &jsonWriter{}
	if c.opts.To == Craftbot {
		c.writeCraftbot(w, es)
	} else {
		c.writeVolcanic(w, es)
	}
	w.b.WriteByte('\n')
	c.res.Converted = len(es)
	return w.b.Bytes()
}

// writeVolcanic writes settings.json's mcpServers, or an appsettings file's
// Mcp:Servers, in source order.
func (c *converter) writeVolcanic(w *jsonWriter, es []*entry) {
	w.open('{')
	if c.opts.Form == FormAppSettings {
		w.key("Mcp")
		w.open('{')
		w.key("Servers")
	} else {
		w.key("mcpServers")
	}
	w.open('{')
	for _, e := range es {
		w.key(e.name)
		w.open('{')
		w.key(c.field("command"))
		w.str(e.command)
		if len(e.args) > 0 {
			w.key(c.field("args"))
			w.strings(e.args)
		}
		if e.cwd != nil {
			w.key(c.field("cwd"))
			w.str(*e.cwd)
		}
		if len(e.env) > 0 {
			w.key(c.field("env"))
			writeEnv(w, e.env)
		}
		if e.enabled != nil {
			w.key(c.field("enabled"))
			w.b.WriteString(strconv.FormatBool(*e.enabled))
		}
		if e.callTimeout > 0 {
			w.key(c.field("callTimeoutSeconds"))
			w.b.WriteString(strconv.Itoa(e.callTimeout))
		}
		w.close('}')
	}
	w.close('}')
	if c.opts.Form == FormAppSettings {
		w.close('}')
	}
	w.close('}')
}

func writeEnv(w *jsonWriter, env []envVar) {
	w.open('{')
	for _, v := range env {
		w.key(v.key)
		if v.value == nil {
			w.b.WriteString("null")
		} else {
			w.str(*v.value)
		}
	}
	w.close('}')
}

// writeCraftbot writes mcp_config.json as the seed shows it. auto_connect
// is true: the source clients start their servers when they start.
func (c *converter) writeCraftbot(w *jsonWriter, es []*entry) {
	w.open('{')
	w.key("auto_connect")
	w.b.WriteString("true")
	w.key("mcp_servers")
	w.open('[')
	for _, e := range es {
		w.item()
		w.open('{')
		w.key("name")
		w.str(e.name)
		w.key("description")
		w.str(c.description(e))
		w.key("transport")
		w.str(e.transport)
		if e.transport == "stdio" {
			w.key("command")
			w.str(e.command)
			w.key("args")
			w.strings(e.args)
			w.key("env")
			writeEnv(w, e.env)
		} else {
			w.key("url")
			w.str(e.url)
		}
		w.key("enabled")
		w.b.WriteString(strconv.FormatBool(e.enabled == nil || *e.enabled))
		w.close('}')
	}
	w.close(']')
	w.close('}')
}

// description says where an entry came from (CraftBot shows it in its
// server list).
func (c *converter) description(e *entry) string {
	d := "imported from " + clientName(c.opts.From)
	if e.name != e.orig {
		d += ` (server "` + e.orig + `")`
	}
	return d
}
