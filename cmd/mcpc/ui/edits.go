package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
)

// The edits of the page: the verbs of mcpc config, one form each.
var editOps = map[string]craftbot.Op{
	"enable": craftbot.OpEnable, "disable": craftbot.OpDisable, "remove": craftbot.OpRemove, "env": craftbot.OpEnv,
	"add": craftbot.OpAdd, "add-json": craftbot.OpAddJSON,
}

// editOf is the edit a form asks for. The add form (stdio) is mcpc config
// add when it names no env key and no description, else the entry it
// describes as add-json (mcpc config add takes neither).
func editOf(f url.Values) (craftbot.Edit, error) {
	op, ok := editOps[f.Get("op")]
	if !ok {
		return craftbot.Edit{}, errors.New("unknown edit: use enable, disable, remove, env, add or add-json")
	}
	ed := craftbot.Edit{Op: op, Name: strings.TrimSpace(f.Get("name"))}
	switch op {
	case craftbot.OpEnv:
		ed.Key, ed.Value = strings.TrimSpace(f.Get("key")), f.Get("value")
	case craftbot.OpAddJSON:
		ed.JSON = f.Get("json")
	case craftbot.OpAdd:
		command := strings.TrimSpace(f.Get("command"))
		var args []string
		for _, a := range strings.Split(strings.ReplaceAll(f.Get("args"), "\r\n", "\n"), "\n") {
			if a = strings.TrimSpace(a); a != "" {
				args = append(args, a)
			}
		}
		keys := strings.Fields(strings.ReplaceAll(f.Get("env_keys"), ",", " "))
		desc := strings.TrimSpace(f.Get("description"))
		if command == "" {
			return ed, &craftbot.EditError{Msg: "add needs the command that runs the server (such as npx)"}
		}
		if len(keys) == 0 && desc == "" {
			ed.Command = append([]string{command}, args...)
			break
		}
		ed.Op, ed.JSON = craftbot.OpAddJSON, stdioEntry(ed.Name, desc, command, args, keys, f.Get("enabled") != "")
	}
	return ed, nil
}

// stdioEntry is the JSON of a stdio entry in the order the seed writes its
// fields, its env keys empty (to be set one by one).
func stdioEntry(name, desc, command string, args, keys []string, enabled bool) string {
	var b bytes.Buffer
	enc := func(v any) string {
		var o bytes.Buffer
		e := json.NewEncoder(&o)
		e.SetEscapeHTML(false)
		_ = e.Encode(v)
		return strings.TrimSpace(o.String())
	}
	if args == nil {
		args = []string{}
	}
	fmt.Fprintf(&b, `{"name": %s`, enc(name))
	if desc != "" {
		fmt.Fprintf(&b, `, "description": %s`, enc(desc))
	}
	fmt.Fprintf(&b, `, "transport": %s, "command": %s, "args": %s, "env": {`, enc(plan.TransportStdio), enc(command), enc(args))
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `%s: ""`, enc(k))
	}
	fmt.Fprintf(&b, `}, "enabled": %t}`, enabled)
	return b.String()
}

// edit makes one edit of mcp_config.json with craftbot.EditFile, as mcpc
// config does. An accepted edit sends the browser back to the list (which
// says what was done and when it takes effect, without a value); a refused
// one shows its diagnostics, and the file is not written.
func (s *Server) edit(w http.ResponseWriter, r *http.Request, sess string) {
	if !s.view.edits {
		s.fail(w, r, http.StatusBadRequest, "only a craftbot deployment (--profile craftbot --config FILE) is edited here")
		return
	}
	ed, err := editOf(r.PostForm)
	if err != nil {
		red := craftbot.Redactor(r.PostForm.Get("value"))
		s.refused(w, r, sess, http.StatusBadRequest, red.Redact(err.Error()), nil)
		return
	}
	before, ch, err := craftbot.EditFile(s.opts.Config, ed, s.opts.Craftbot)
	red := craftbot.Redactor(ed.Value, before)
	var ee *craftbot.EditError
	switch {
	case errors.As(err, &ee):
		s.refused(w, r, sess, http.StatusBadRequest, red.Redact(ee.Msg), nil)
		return
	case errors.Is(err, craftbot.ErrChanged):
		s.refused(w, r, sess, http.StatusConflict, fmt.Sprintf("%s %s (by something other than mcpc); nothing was written: try again", s.opts.Config, craftbot.ErrChanged), nil)
		return
	case err != nil:
		s.refused(w, r, sess, http.StatusInternalServerError, red.Redact(err.Error()), nil)
		return
	}
	if ch.Refused != "" {
		red = craftbot.Redactor(ed.Value, before, ch.Data)
		var details []string
		for _, d := range ch.Diagnostics {
			details = append(details, red.Redact(formatDiag(d)))
		}
		s.log("refused %s %s: %s; %s is left untouched", ed.Op, red.Redact(ed.Name), red.Redact(ch.Refused), s.opts.Config)
		s.refused(w, r, sess, http.StatusConflict, fmt.Sprintf("%s %s refused: %s; %s is left untouched", ed.Op, red.Redact(ed.Name), red.Redact(ch.Refused), s.opts.Config), details)
		return
	}
	q := url.Values{"done": {string(ed.Op)}, "name": {ed.Name}}
	if ed.Op == craftbot.OpEnv {
		q.Set("key", ed.Key)
	}
	if ch.Unchanged {
		q.Set("unchanged", "1")
	} else {
		s.log("%s", editNotice(q)+" in "+s.opts.Config)
	}
	http.Redirect(w, r, "/?"+q.Encode(), http.StatusSeeOther)
}

// refused shows the servers page with why an edit was not made.
func (s *Server) refused(w http.ResponseWriter, r *http.Request, sess string, code int, problem string, details []string) {
	body, err := s.servers(r.Context(), nil)
	if err != nil {
		problem += "; and " + err.Error()
	}
	s.render(w, code, "servers", page{Title: "Servers", Nav: "servers", CSRF: s.csrfToken(sess), Problem: problem, Details: details, Body: body})
}

// editNotice says what an accepted edit did, from the page's query; names
// only (the query holds no value).
func editNotice(q url.Values) string {
	name, key := q.Get("name"), q.Get("key")
	if q.Get("unchanged") != "" {
		return fmt.Sprintf("%s %s: the file says so already; nothing written", q.Get("done"), name)
	}
	switch craftbot.Op(q.Get("done")) {
	case craftbot.OpEnable:
		return "enabled server " + name
	case craftbot.OpDisable:
		return "disabled server " + name
	case craftbot.OpRemove:
		return "removed server " + name
	case craftbot.OpEnv:
		return fmt.Sprintf("set env %s of server %s (the value is not shown)", key, name)
	case craftbot.OpAdd, craftbot.OpAddJSON:
		return "added server " + name
	}
	return ""
}

// takesEffect says when an edit of mcp_config.json reaches the servers, as
// CraftBot's manual has it and as mcpc run does; the version packs' notes
// (Options.EditNotes), which follow, say where a CraftBot version does
// otherwise.
const takesEffect = "CraftBot, by its manual, watches mcp_config.json and applies a change without a restart " +
	"(removed or disabled servers disconnect, enabled ones connect); mcpc run --watch applies it too"

// noticeAfterEdit is the page's notice after an edit: what it did, when it
// takes effect and, when it changed the file, the notes of
// opts.EditNotes (made here, never taken from the query, which anyone can
// write).
func (s *Server) noticeAfterEdit(q url.Values) string {
	notice := editNotice(q)
	if notice == "" || q.Get("unchanged") != "" {
		return notice
	}
	notice += ". " + takesEffect
	if s.opts.EditNotes != nil {
		for _, n := range s.opts.EditNotes(s.opts.Config) {
			notice += ". " + n
		}
	}
	return notice
}
