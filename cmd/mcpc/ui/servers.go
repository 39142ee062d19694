package ui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
)

// row is one server as the servers page shows it. It holds env names,
// never a value.
type row struct {
	Name        string
	Description string
	Source      string // file:line
	Transport   string
	Enabled     bool
	// Set is the action set (craftbot) or the tool prefix (volcanic).
	Set string
	// Verdict says what the host will do with the entry as the file
	// stands; Tone is how it reads: ok, off, warn or error.
	Verdict, Tone string
	// OSMark says why it cannot start on the target OS ("" when it can).
	OSMark string
	// Runtime is what the attached gateway says of the server ("" without
	// one): beside the verdict, never merged into it.
	Runtime, RuntimeTone string
	Env                  []envName
	Diagnostics          []diagLine
	// NeedsConfig: an env key is empty or unset. Problems: a warning or
	// an error is about it.
	NeedsConfig, Problems bool
	// Provenance is each field's origin, as mcpc explain shows it
	// (volcanic).
	Provenance []compile.FieldOrigin
	// Edits the file allows on the row (craftbot): toggle (enable or
	// disable), env values (stdio entries the host loads).
	CanEnable, CanDisable, CanEnv bool
}

type envName struct {
	Key string
	Set bool // has a non-blank value
}

// diagLine is one diagnostic on the page.
type diagLine struct {
	Severity, Where, Message, Rule, Suggestion string
}

// serversBody is the servers page.
type serversBody struct {
	Profile  string
	File     string // craftbot: the file edited
	TargetOS string
	SetLabel string // "action set" or "tool prefix"
	Host     string // "CraftBot" or "the host": who the verdicts are about
	Editable bool
	Gateway  bool // a gateway is attached: the Gateway column
	// GatewayProblem says why the gateway's state could not be read.
	GatewayProblem string
	Rows           []row
	// Total is the number of servers before the filter.
	Total int
	// General are diagnostics about no one server (a file with errors).
	General []diagLine
	// Query, Show and Sort are the filter as given; Shows the filters.
	Query, Show, Sort string
	Shows             []showOption
}

type showOption struct{ Value, Label string }

// The filters of the servers page.
var shows = []showOption{
	{"", "all servers"}, {"enabled", "enabled"}, {"needs-config", "needs config"}, {"problems", "with problems"},
}

func (s *Server) serversPage(w http.ResponseWriter, r *http.Request, sess string) {
	body, err := s.servers(r.Context(), r.URL.Query())
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	s.render(w, http.StatusOK, "servers", page{Title: "Servers", Nav: "servers", CSRF: s.csrfToken(sess), Notice: s.noticeAfterEdit(r.URL.Query()), Body: body, Live: true})
}

// servers reads the deployment as it is now (every page load reads the
// files again), with the gateway's state when one is attached, filtered
// and sorted as q asks.
func (s *Server) servers(ctx context.Context, q url.Values) (*serversBody, error) {
	b, err := s.view.servers(s)
	if err != nil {
		return nil, err
	}
	if s.opts.Gateway != nil {
		b.Gateway = true
		s.attachRuntime(ctx, b)
	}
	b.Total = len(b.Rows)
	b.Query, b.Show, b.Sort, b.Shows = strings.TrimSpace(q.Get("q")), q.Get("show"), q.Get("sort"), shows
	kept := b.Rows[:0]
	for _, rw := range b.Rows {
		if rw.matches(b.Query, b.Show) {
			kept = append(kept, rw)
		}
	}
	b.Rows = kept
	sortRows(b.Rows, b.Sort)
	return b, nil
}

// matches reports whether the row is one the filter keeps: the query in
// its name, description, transport, set or env keys (case-insensitive),
// and the show filter.
func (rw *row) matches(q, show string) bool {
	switch show {
	case "enabled":
		if !rw.Enabled {
			return false
		}
	case "needs-config":
		if !rw.NeedsConfig {
			return false
		}
	case "problems":
		if !rw.Problems {
			return false
		}
	}
	return q == "" || strings.Contains(rw.SearchText(), strings.ToLower(q))
}

// SearchText is what the search looks in, lower case (the page's script
// filters on it too).
func (rw row) SearchText() string {
	parts := []string{rw.Name, rw.Description, rw.Transport, rw.Set}
	for _, e := range rw.Env {
		parts = append(parts, e.Key)
	}
	return strings.ToLower(strings.Join(parts, " "))
}

// sortRows sorts by name, or with problems (errors, then warnings) first,
// or the enabled first; by name within.
func sortRows(rows []row, by string) {
	rank := func(rw row) int {
		switch by {
		case "problems":
			switch rw.Tone {
			case "error":
				return 0
			case "warn":
				return 1
			}
			if rw.Problems {
				return 2
			}
			return 3
		case "enabled":
			if rw.Enabled {
				return 0
			}
			return 1
		}
		return 0
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if a, b := rank(rows[i]), rank(rows[j]); a != b {
			return a < b
		}
		return rows[i].Name < rows[j].Name
	})
}

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

// lintDiagnostics are the deployment's diagnostics as Options.Lint gives
// them, nil without it.
func (s *Server) lintDiagnostics() (*compile.Result, []diag.Diagnostic, error) {
	if s.opts.Lint == nil {
		return nil, nil, nil
	}
	return s.opts.Lint()
}

// craftbotServers are the rows of mcpc config list --all (craftbot.Check
// and craftbot.Rows on the file), with mcpc lint's diagnostics when
// Options.Lint is set.
func (s *Server) craftbotServers() (*serversBody, error) {
	b := &serversBody{Profile: plan.ProfileCraftbot, File: s.opts.Config, TargetOS: s.opts.Craftbot.TargetOS, SetLabel: "action set", Host: "CraftBot", Editable: true}
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
	if _, lds, err := s.lintDiagnostics(); err != nil {
		b.General = append(b.General, diagLine{Severity: "error", Message: "mcpc lint did not run: " + err.Error() + "; the compiler's diagnostics are shown"})
	} else if lds != nil {
		ds = lds
	}
	red := craftbot.Redactor("", data)
	if cfg.LoadsNothing != "" {
		b.Editable = false // Apply refuses every edit of a file the host loads nothing from
	}
	inRow := map[string]bool{}
	for _, cr := range craftbot.Rows(data, cfg, ds) {
		e := cr.Entry
		rw := row{Name: e.Name, Description: e.Description, Transport: e.Transport, Enabled: e.Enabled, Set: e.ActionSet, OSMark: e.OSProblem,
			Source: fmt.Sprintf("%s:%d", s.opts.Config, e.NamePos.Line)}
		if rw.Name == "" {
			rw.Name = fmt.Sprintf("%s[%d]", craftbot.FieldServers, e.Index)
		}
		for _, k := range cr.Env {
			rw.Env = append(rw.Env, envName{Key: k.Key, Set: k.Set})
			rw.NeedsConfig = rw.NeedsConfig || !k.Set
		}
		for _, d := range cr.Diagnostics {
			inRow[diagKey(d)] = true
			rw.addDiag(d)
		}
		rw.Verdict, rw.Tone = craftbotVerdict(e, cr, cfg.AutoConnect, s.opts.Craftbot.TargetOS)
		if cfg.LoadsNothing != "" {
			rw.Verdict, rw.Tone = "CraftBot loads no server from this file: "+cfg.LoadsNothing, "error"
		}
		if b.Editable {
			rw.CanEnable = !e.Enabled && e.Loads()
			rw.CanDisable = e.Enabled
			rw.CanEnv = e.Loads() && e.Transport == plan.TransportStdio
		}
		redactRow(&rw, red.Redact)
		b.Rows = append(b.Rows, rw)
	}
	for _, d := range ds {
		if !inRow[diagKey(d)] {
			b.General = append(b.General, toDiagLine(d))
		}
	}
	for i := range b.General {
		b.General[i] = redactDiag(b.General[i], red.Redact)
	}
	return b, nil
}

func diagKey(d diag.Diagnostic) string {
	return d.Pos().String() + "\x00" + d.Rule + "\x00" + d.Message
}

// craftbotVerdict says what CraftBot does with the entry: starts it (or
// connects to it), on which condition, or skips it and why.
func craftbotVerdict(e *craftbot.Entry, cr craftbot.Row, autoConnect bool, targetOS string) (string, string) {
	start, verb := "starts it", "start"
	if e.Transport != plan.TransportStdio {
		start, verb = "connects to it", "connect to"
	}
	when := " at startup"
	if !autoConnect {
		when = " when a task selects its action set (auto_connect is off)"
	}
	var empty []string
	for _, k := range cr.Env {
		if !k.Set {
			empty = append(empty, k.Key)
		}
	}
	switch {
	case cr.Skip != nil && e.Enabled:
		return "CraftBot skips it: " + cr.Skip.Message + " [" + cr.Skip.Rule + "]", "error"
	case cr.Skip != nil:
		return "off; enabled as it stands, CraftBot would skip it: " + cr.Skip.Message + " [" + cr.Skip.Rule + "]", "off"
	case cr.Shadowed != nil:
		return "CraftBot uses an earlier entry of this name instead: " + cr.Shadowed.Message, "warn"
	case !e.Enabled:
		return "off: CraftBot does not " + verb + " it until it is enabled", "off"
	case e.CannotStart != "":
		return "CraftBot loads it, and its start fails: " + e.CannotStart, "error"
	case e.OSProblem != "":
		return fmt.Sprintf("CraftBot %s%s, and on %s it will not start", start, when, targetOS), "error"
	case len(empty) > 0:
		return fmt.Sprintf("CraftBot %s%s, with %s empty: calls that need it fail", start, when, strings.Join(empty, ", ")), "warn"
	}
	return "CraftBot " + start + when, "ok"
}

// volcanicServers are the compiler's servers (the draft plan when there
// are errors, as mcpc explain shows them), each with its diagnostics (mcpc
// lint's when Options.Lint is set) and its fields' provenance, and the
// definitions an earlier source shadowed.
func (s *Server) volcanicServers() (*serversBody, error) {
	b := &serversBody{Profile: compile.ProfileVolcanic, SetLabel: "tool prefix", Host: "the host"}
	res, lds, err := s.lintDiagnostics()
	if err != nil || res == nil {
		if err != nil {
			b.General = append(b.General, diagLine{Severity: "error", Message: "mcpc lint did not run: " + err.Error() + "; the compiler's diagnostics are shown"})
		}
		if res, err = compile.Compile(s.opts.Compile); err != nil {
			return nil, err
		}
		lds = res.Diagnostics
	}
	red := res.Redactor.Redact
	serverOf := res.ServerOf()
	byServer := map[string][]diag.Diagnostic{}
	failsAll := len(diag.Errors(lds)) > 0
	for _, d := range lds {
		if owner := serverOf(d); owner != "" {
			byServer[owner] = append(byServer[owner], d)
		} else {
			b.General = append(b.General, toDiagLine(d))
		}
	}
	for i := range b.General {
		b.General[i] = redactDiag(b.General[i], red)
	}
	p := res.Plan
	if p == nil {
		p = res.Draft()
	}
	if p != nil {
		for _, srv := range p.Servers {
			rw := row{Name: srv.Name, Description: srv.Description, Source: originOf(srv.Origin), Transport: srv.Transport, Enabled: srv.Enabled, Set: srv.ToolPrefix}
			for _, k := range sortedKeys(srv.Env) {
				set := srv.Env[k] != nil && *srv.Env[k] != ""
				rw.Env = append(rw.Env, envName{Key: k, Set: set})
				rw.NeedsConfig = rw.NeedsConfig || !set
			}
			for _, d := range byServer[srv.Name] {
				rw.addDiag(d)
			}
			rw.Verdict, rw.Tone = volcanicVerdict(srv, rw, failsAll)
			if x, ok := res.Explain(srv.Name); ok {
				rw.Provenance = provenance(x)
			}
			redactRow(&rw, red)
			b.Rows = append(b.Rows, rw)
		}
	}
	for _, e := range res.Entries {
		if e.Shadowed() {
			rw := row{Name: e.Name, Source: originOf(e.Origin), Tone: "off",
				Verdict: "ignored: " + originOf(e.Winner.Origin) + " defines it first (the first source wins)"}
			redactRow(&rw, red)
			b.Rows = append(b.Rows, rw)
		}
	}
	return b, nil
}

// volcanicVerdict says what the host does with a server of the plan.
func volcanicVerdict(srv plan.Server, rw row, failsAll bool) (string, string) {
	for _, d := range rw.Diagnostics {
		if d.Severity == "error" {
			return "the host refuses the whole deployment: this server has errors", "error"
		}
	}
	switch {
	case failsAll:
		return "not served: the deployment has errors elsewhere, and the host refuses it", "error"
	case !srv.Enabled:
		return "off: the host does not start it", "off"
	case rw.NeedsConfig:
		return "the host starts it for each chat that calls its tools, with an env value empty", "warn"
	}
	return "the host starts it for each chat that calls its tools", "ok"
}

// provenance is the fields of mcpc explain, without a value of the env
// (its origin says where it comes from; a value may be a secret).
func provenance(x *compile.Explanation) []compile.FieldOrigin {
	out := make([]compile.FieldOrigin, 0, len(x.Fields))
	for _, f := range x.Fields {
		if strings.HasPrefix(strings.ToLower(f.Field), "env") {
			f.Value = "(not shown)"
		}
		out = append(out, f)
	}
	return out
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

func toDiagLine(d diag.Diagnostic) diagLine {
	where := ""
	if p := d.Pos(); p.File != "" {
		where = p.String()
	}
	return diagLine{Severity: string(d.Severity), Where: where, Message: d.Message, Rule: d.Rule, Suggestion: d.Suggestion}
}

func (rw *row) addDiag(d diag.Diagnostic) {
	l := toDiagLine(d)
	rw.Diagnostics = append(rw.Diagnostics, l)
	if d.Severity == diag.Error || d.Severity == diag.Warning {
		rw.Problems = true
	}
}

// formatDiag is a diagnostic on one line, as a refusal lists it.
func formatDiag(d diag.Diagnostic) string {
	s := fmt.Sprintf("%s: %s: %s [%s]", d.Pos(), d.Severity, d.Message, d.Rule)
	if d.Suggestion != "" {
		s += " — " + d.Suggestion
	}
	return s
}

func redactDiag(l diagLine, red func(string) string) diagLine {
	l.Where, l.Message, l.Suggestion = red(l.Where), red(l.Message), red(l.Suggestion)
	return l
}

// redactRow passes every text of a row through red, in case one quotes a
// value.
func redactRow(rw *row, red func(string) string) {
	rw.Name, rw.Description, rw.Source, rw.Set, rw.Verdict, rw.OSMark = red(rw.Name), red(rw.Description), red(rw.Source), red(rw.Set), red(rw.Verdict), red(rw.OSMark)
	for i := range rw.Diagnostics {
		rw.Diagnostics[i] = redactDiag(rw.Diagnostics[i], red)
	}
	for i := range rw.Provenance {
		f := &rw.Provenance[i]
		f.Field, f.Value, f.From = red(f.Field), red(f.Value), red(f.From)
	}
}

// deploymentRedactor redacts the values the deployment's files hold: the
// env values of mcp_config.json (craftbot), the compiler's secrets
// (volcanic). What cannot be read redacts nothing more.
func (s *Server) deploymentRedactor() func(string) string {
	if s.view.edits {
		data, err := inputfile.Read(s.opts.Config)
		if err != nil {
			return func(v string) string { return v }
		}
		return craftbot.Redactor("", data).Redact
	}
	res, err := compile.Compile(s.opts.Compile)
	if err != nil {
		return func(v string) string { return v }
	}
	return res.Redactor.Redact
}
