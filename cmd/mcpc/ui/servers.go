package ui

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"sort"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
)

// row is one server as the servers page shows it. It holds env names,
// never a value.
type row struct {
	Name      string
	Source    string // file:line
	Transport string
	Enabled   bool
	// Set is the action set (craftbot) or the tool prefix (volcanic).
	Set string
	// Valid: the host loads it and nothing about it is an error.
	Valid  bool
	Status string
	// OSMark says why it cannot start on the target OS ("" when it can).
	OSMark      string
	Env         []envName
	Diagnostics []string
}

type envName struct {
	Key string
	Set bool // has a non-blank value
}

// serversBody is the servers page.
type serversBody struct {
	Profile  string
	File     string // craftbot: the file edited
	TargetOS string
	SetLabel string // "action set" or "tool prefix"
	Editable bool
	Rows     []row
	// General are diagnostics about no one server (a file with errors).
	General []string
}

func (s *Server) serversPage(w http.ResponseWriter, r *http.Request, sess string) {
	body, err := s.servers()
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	s.render(w, http.StatusOK, "servers", page{Title: "Servers", Nav: "servers", CSRF: s.csrfToken(sess), Notice: s.noticeAfterEdit(r.URL.Query()), Body: body})
}

// servers reads the deployment as it is now (every page load reads the
// files again).
func (s *Server) servers() (*serversBody, error) { return s.view.servers(s) }

// profileView is what the page does with a deployment of one profile: how
// it lists the servers, and whether it edits the file they are read from.
type profileView struct {
	servers func(*Server) (*serversBody, error)
	edits   bool
}

// profileViews are the views of the profiles, by name.
var profileViews = map[string]profileView{
	plan.ProfileVolcanic: {servers: (*Server).volcanicServers},
	plan.ProfileCraftbot: {servers: (*Server).craftbotServers, edits: true},
}

// craftbotServers are the rows of mcpc config list --all: craftbot.Check
// and craftbot.Rows on the file.
func (s *Server) craftbotServers() (*serversBody, error) {
	b := &serversBody{Profile: plan.ProfileCraftbot, File: s.opts.Config, TargetOS: s.opts.Craftbot.TargetOS, SetLabel: "action set", Editable: true}
	data, err := inputfile.Read(s.opts.Config)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist", s.opts.Config)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", s.opts.Config, err)
	}
	cfg, ds, err := craftbot.Check(s.opts.Config, data, s.opts.Craftbot)
	if err != nil {
		return nil, err
	}
	red := craftbot.Redactor("", data)
	if cfg.LoadsNothing != "" {
		for _, d := range diag.Errors(ds) {
			b.General = append(b.General, red.Redact(formatDiag(d)))
		}
		b.Editable = false // Apply refuses every edit of a file the host loads nothing from
	}
	for _, cr := range craftbot.Rows(data, cfg, ds) {
		e := cr.Entry
		rw := row{Name: e.Name, Transport: e.Transport, Enabled: e.Enabled, Set: e.ActionSet, OSMark: e.OSProblem,
			Source: fmt.Sprintf("%s:%d", s.opts.Config, e.NamePos.Line), Valid: e.Loads(), Status: "loads"}
		if rw.Name == "" {
			rw.Name = fmt.Sprintf("%s[%d]", craftbot.FieldServers, e.Index)
		}
		if cr.Skip != nil {
			rw.Status = "skipped: " + cr.Skip.Message + " [" + cr.Skip.Rule + "]"
		}
		for _, k := range cr.Env {
			rw.Env = append(rw.Env, envName{Key: k.Key, Set: k.Set})
		}
		for _, d := range cr.Diagnostics {
			rw.Diagnostics = append(rw.Diagnostics, formatDiag(d))
			if d.Severity == diag.Error {
				rw.Valid = false
			}
		}
		redactRow(&rw, red.Redact)
		b.Rows = append(b.Rows, rw)
	}
	return b, nil
}

// volcanicServers are the compiler's servers (the draft plan when there
// are errors, as mcpc explain shows them), each with its diagnostics, and
// the definitions an earlier source shadowed.
func (s *Server) volcanicServers() (*serversBody, error) {
	res, err := compile.Compile(s.opts.Compile)
	if err != nil {
		return nil, err
	}
	b := &serversBody{Profile: compile.ProfileVolcanic, SetLabel: "tool prefix"}
	red := res.Redactor.Redact
	byServer, rest := res.DiagnosticsByServer()
	for _, d := range rest {
		b.General = append(b.General, red(formatDiag(d)))
	}
	p := res.Plan
	if p == nil {
		p = res.Draft()
	}
	if p != nil {
		for _, srv := range p.Servers {
			rw := row{Name: srv.Name, Source: originOf(srv.Origin), Transport: srv.Transport, Enabled: srv.Enabled,
				Set: srv.ToolPrefix, Valid: true, Status: "loads"}
			for _, k := range sortedKeys(srv.Env) {
				rw.Env = append(rw.Env, envName{Key: k, Set: srv.Env[k] != nil && *srv.Env[k] != ""})
			}
			for _, d := range byServer[srv.Name] {
				rw.Diagnostics = append(rw.Diagnostics, formatDiag(d))
				if d.Severity == diag.Error {
					rw.Valid, rw.Status = false, "has errors: the host refuses to start"
				}
			}
			redactRow(&rw, red)
			b.Rows = append(b.Rows, rw)
		}
	}
	for _, e := range res.Entries {
		if e.Shadowed() {
			rw := row{Name: e.Name, Source: originOf(e.Origin), Status: "shadowed by " + originOf(e.Winner.Origin) + " (the first source wins)"}
			redactRow(&rw, red)
			b.Rows = append(b.Rows, rw)
		}
	}
	return b, nil
}

// originOf is where a volcanic server is defined: file:line, or the
// environment variable.
func originOf(o plan.Origin) string {
	switch {
	case o.Path != "" && o.Line > 0:
		return fmt.Sprintf("%s:%d", o.Path, o.Line)
	case o.Key != "":
		return o.Source + " " + o.Key
	case o.Path != "":
		return o.Path
	}
	return o.Source
}

func sortedKeys(m map[string]*string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func formatDiag(d diag.Diagnostic) string {
	s := fmt.Sprintf("%s: %s: %s [%s]", d.Pos(), d.Severity, d.Message, d.Rule)
	if d.Suggestion != "" {
		s += " — " + d.Suggestion
	}
	return s
}

// redactRow passes every text of a row through red, in case one quotes a
// value.
func redactRow(rw *row, red func(string) string) {
	rw.Name, rw.Source, rw.Set, rw.Status, rw.OSMark = red(rw.Name), red(rw.Source), red(rw.Set), red(rw.Status), red(rw.OSMark)
	for i := range rw.Diagnostics {
		rw.Diagnostics[i] = red(rw.Diagnostics[i])
	}
}

// The edits of the page: the verbs of mcpc config that change an entry.
var editOps = map[string]craftbot.Op{
	"enable": craftbot.OpEnable, "disable": craftbot.OpDisable, "remove": craftbot.OpRemove, "env": craftbot.OpEnv,
}

// edit makes one edit of mcp_config.json with craftbot.EditFile, as mcpc
// config does. An accepted edit sends the browser back to the list (which
// says what was done, without a value); a refused one shows its
// diagnostics, and the file is not written.
func (s *Server) edit(w http.ResponseWriter, r *http.Request, sess string) {
	if !s.view.edits {
		s.fail(w, r, http.StatusBadRequest, "only a craftbot deployment (--profile craftbot --config FILE) is edited here")
		return
	}
	op, ok := editOps[r.PostForm.Get("op")]
	if !ok {
		s.fail(w, r, http.StatusBadRequest, "unknown edit: use enable, disable, remove or env")
		return
	}
	ed := craftbot.Edit{Op: op, Name: r.PostForm.Get("name"), Key: r.PostForm.Get("key"), Value: r.PostForm.Get("value")}
	if op != craftbot.OpEnv {
		ed.Key, ed.Value = "", ""
	}
	before, ch, err := craftbot.EditFile(s.opts.Config, ed, s.opts.Craftbot)
	red := craftbot.Redactor(ed.Value, before)
	var ee *craftbot.EditError
	switch {
	case errors.As(err, &ee):
		s.refused(w, sess, http.StatusBadRequest, red.Redact(ee.Msg), nil)
		return
	case errors.Is(err, craftbot.ErrChanged):
		s.refused(w, sess, http.StatusConflict, fmt.Sprintf("%s %s (by something other than mcpc); nothing was written: try again", s.opts.Config, craftbot.ErrChanged), nil)
		return
	case err != nil:
		s.refused(w, sess, http.StatusInternalServerError, red.Redact(err.Error()), nil)
		return
	}
	if ch.Refused != "" {
		red = craftbot.Redactor(ed.Value, before, ch.Data)
		var details []string
		for _, d := range ch.Diagnostics {
			details = append(details, red.Redact(formatDiag(d)))
		}
		s.log("refused %s %s: %s; %s is left untouched", ed.Op, ed.Name, red.Redact(ch.Refused), s.opts.Config)
		s.refused(w, sess, http.StatusConflict, fmt.Sprintf("%s %s refused: %s; %s is left untouched", ed.Op, red.Redact(ed.Name), red.Redact(ch.Refused), s.opts.Config), details)
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
func (s *Server) refused(w http.ResponseWriter, sess string, code int, problem string, details []string) {
	body, err := s.servers()
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
	}
	return ""
}

// noticeAfterEdit is the page's notice after an edit: what it did and,
// when it changed the file, the notes of opts.EditNotes (made here, never
// taken from the query, which anyone can write).
func (s *Server) noticeAfterEdit(q url.Values) string {
	notice := editNotice(q)
	if notice == "" || q.Get("unchanged") != "" || s.opts.EditNotes == nil {
		return notice
	}
	for _, n := range s.opts.EditNotes(s.opts.Config) {
		notice += ". " + n
	}
	return notice
}
