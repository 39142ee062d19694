package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime/gateway"
)

// The console's tools: a chat's tools as its agent sees them (GET
// …/tools), each with a form made from its input schema, and a call
// through POST …/tools/call; the gateway redacts both.

// toolsBody is the tools page.
type toolsBody struct {
	Where    string
	Craftbot bool
	// Chat is the chat whose tools are shown; Chats every chat (volcanic).
	Chat  string
	Chats []string
	Tools []toolView
	// Called is the tool last called, with its outcome.
	Called *callView
}

type toolView struct {
	gateway.AdminTool
	Fields []field
	// Schema is the input schema as JSON, indented.
	Schema string
}

// field is one input of a tool's form, from one property of its schema.
type field struct {
	Name, Label, Type, Description string
	// Kind is the control: text, number, bool, enum or json.
	Kind     string
	Enum     []string
	Required bool
	Value    string
}

type callView struct {
	Tool      string
	Arguments string
	IsError   bool
	Error     string
	Content   []string
	// Structured is the structured content as JSON.
	Structured string
}

// toolFields are the form fields of a schema's properties: the required
// first, then by name.
func toolFields(schema any) []field {
	m, _ := schema.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	req := map[string]bool{}
	if rs, ok := m["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
	}
	var out []field
	for name, p := range props {
		pm, _ := p.(map[string]any)
		f := field{Name: name, Label: name, Required: req[name], Kind: "json"}
		f.Type, _ = pm["type"].(string)
		f.Description, _ = pm["description"].(string)
		if enum, ok := pm["enum"].([]any); ok {
			for _, e := range enum {
				if s, ok := e.(string); ok {
					f.Enum = append(f.Enum, s)
				}
			}
		}
		switch {
		case len(f.Enum) > 0:
			f.Kind = "enum"
		case f.Type == "string":
			f.Kind = "text"
		case f.Type == "integer" || f.Type == "number":
			f.Kind = "number"
		case f.Type == "boolean":
			f.Kind = "bool"
		}
		if f.Type == "" {
			f.Type = "any (JSON)"
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Required != out[j].Required {
			return out[i].Required
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// callArguments are the arguments a tool's form gives: the JSON of its
// raw field when it has one, else each field converted by its kind (an
// empty field left out).
func callArguments(form map[string][]string, fields []field) (json.RawMessage, error) {
	get := func(k string) string {
		if v := form[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if raw := strings.TrimSpace(get("arguments")); raw != "" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			return nil, fmt.Errorf("the arguments are not a JSON object: %v", err)
		}
		return json.RawMessage(raw), nil
	}
	args := map[string]any{}
	for _, f := range fields {
		v := get("arg." + f.Name)
		if strings.TrimSpace(v) == "" {
			continue
		}
		switch f.Kind {
		case "number":
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a number", f.Name, v)
			}
			if f.Type == "integer" && n != float64(int64(n)) {
				return nil, fmt.Errorf("%s: %q is not an integer", f.Name, v)
			}
			args[f.Name] = n
		case "bool":
			args[f.Name] = v == "true"
		case "json":
			var x any
			if err := json.Unmarshal([]byte(v), &x); err != nil {
				return nil, fmt.Errorf("%s: not JSON: %v", f.Name, err)
			}
			args[f.Name] = x
		default:
			args[f.Name] = v
		}
	}
	b, err := json.Marshal(args)
	return b, err
}

// toolsContext is the tools page of the chat a request is about: the
// query's (or form's), else the first the gateway has; a craftbot
// gateway's one chat.
func (s *Server) toolsContext(ctx context.Context, want string) (*toolsBody, error) {
	b := &toolsBody{Where: s.opts.Gateway.Where}
	host, cb, err := s.gatewayStatus(ctx)
	if err != nil {
		return b, err
	}
	if cb != nil {
		b.Craftbot = true
	} else {
		for _, c := range host.Chats {
			b.Chats = append(b.Chats, c.ID)
		}
		sort.Strings(b.Chats)
		switch {
		case want != "" && contains(b.Chats, want):
			b.Chat = want
		case want != "":
			return b, fmt.Errorf("the gateway has no chat %q; its chats: %s", want, strings.Join(b.Chats, ", "))
		case len(b.Chats) > 0:
			b.Chat = b.Chats[0]
		default:
			return b, nil
		}
	}
	tools, err := s.opts.Gateway.Tools(ctx, b.Chat)
	if err != nil {
		return b, err
	}
	for _, t := range tools {
		tv := toolView{AdminTool: t, Fields: toolFields(t.InputSchema)}
		if t.InputSchema != nil {
			js, _ := json.MarshalIndent(t.InputSchema, "", "  ")
			tv.Schema = string(js)
		}
		b.Tools = append(b.Tools, tv)
	}
	return b, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Server) toolsPage(w http.ResponseWriter, r *http.Request, sess string) {
	body, err := s.toolsContext(r.Context(), r.URL.Query().Get("chat"))
	p := page{Title: "Tools", Nav: "tools", CSRF: s.csrfToken(sess), Body: body}
	code := http.StatusOK
	if err != nil {
		p.Problem, code = err.Error(), http.StatusBadGateway
	}
	s.render(w, code, "tools", p)
}

// callTool calls one tool from its form and shows the tools page with the
// outcome (redacted by the gateway).
func (s *Server) callTool(w http.ResponseWriter, r *http.Request, sess string) {
	body, err := s.toolsContext(r.Context(), r.PostForm.Get("chat"))
	p := page{Title: "Tools", Nav: "tools", CSRF: s.csrfToken(sess), Body: body}
	render := func(code int, problem string) {
		s.redactCall(body)
		p.Problem = s.deploymentRedactor()(problem)
		s.render(w, code, "tools", p)
	}
	if err != nil {
		render(http.StatusBadGateway, err.Error())
		return
	}
	name := r.PostForm.Get("tool")
	var tool *toolView
	for i := range body.Tools {
		if body.Tools[i].Name == name {
			tool = &body.Tools[i]
		}
	}
	if tool == nil {
		render(http.StatusBadRequest, fmt.Sprintf("the chat's agent sees no tool %q", name))
		return
	}
	for i := range tool.Fields {
		tool.Fields[i].Value = r.PostForm.Get("arg." + tool.Fields[i].Name)
	}
	args, err := callArguments(r.PostForm, tool.Fields)
	cv := &callView{Tool: name, Arguments: string(args)}
	body.Called = cv
	if err != nil {
		cv.IsError, cv.Error = true, err.Error()
		render(http.StatusBadRequest, "")
		return
	}
	res, err := s.opts.Gateway.CallTool(r.Context(), body.Chat, name, args)
	switch {
	case err != nil:
		cv.IsError, cv.Error = true, err.Error()
	case res.Error != "":
		cv.IsError, cv.Error = true, res.Error
	case res.Result != nil:
		cv.IsError = res.Result.IsError
		for _, c := range res.Result.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				cv.Content = append(cv.Content, t.Text)
				continue
			}
			js, _ := json.MarshalIndent(c, "", "  ")
			cv.Content = append(cv.Content, string(js))
		}
		if res.Result.StructuredContent != nil {
			js, _ := json.MarshalIndent(res.Result.StructuredContent, "", "  ")
			cv.Structured = string(js)
		}
	}
	s.log("called tool %s%s", name, chatNote(body.Chat))
	render(http.StatusOK, "")
}

// redactCall passes what the page echoes of a call (the arguments as
// typed, the outcome) through the deployment's own redactor too: the
// gateway redacts the secrets it knows, this the values of the file the
// page reads (an operator may paste one into a field).
func (s *Server) redactCall(b *toolsBody) {
	red := s.deploymentRedactor()
	if b.Called != nil {
		c := b.Called
		c.Arguments, c.Error, c.Structured = red(c.Arguments), red(c.Error), red(c.Structured)
		for i := range c.Content {
			c.Content[i] = red(c.Content[i])
		}
	}
	for i := range b.Tools {
		for j := range b.Tools[i].Fields {
			f := &b.Tools[i].Fields[j]
			f.Value = red(f.Value)
		}
	}
}

func chatNote(chat string) string {
	if chat == "" {
		return ""
	}
	return " in chat " + chat
}
