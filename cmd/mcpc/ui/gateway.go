package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/gateway"
)

// The console: a running gateway (mcpc run --http, either profile) read
// and driven through its admin endpoints with the admin token, which stays
// here. Every text comes redacted by the gateway.

// gatewayBody is the console page.
type gatewayBody struct {
	Where string
	// Summary is the line above the tables (the live one's too).
	Summary string
	// Craftbot: the gateway runs a craftbot plan (one set of servers, no
	// chats).
	Craftbot    bool
	AutoConnect bool
	Actions     int
	// Processes counts the chats' server processes running or starting
	// (volcanic).
	Processes int
	Discovery []runtime.DiscoveryStatus
	// Servers are a craftbot gateway's servers.
	Servers []consoleServer
	Chats   []gatewayChat
}

type gatewayChat struct {
	ID, Workspace string
	Servers       []consoleServer
}

// consoleServer is one server's line on the console: a craftbot server,
// or a server in one chat.
type consoleServer struct {
	Name, Transport, State, LastError string
	Tools, Starts, Pid                int
	StderrTail                        []string
	// Problem says why the server's details could not be read.
	Problem string
	// Tone is how the state reads: ok, off, warn or error.
	Tone string
}

// stateTone is how a runtime state reads.
func stateTone(state string) string {
	switch {
	case state == "running" || state == "ok":
		return "ok"
	case strings.HasPrefix(state, "failed"):
		return "error"
	case state == "disabled" || state == "not started" || state == "not discovered":
		return "off"
	}
	return "warn"
}

func (s *Server) gatewayPage(w http.ResponseWriter, r *http.Request, sess string) {
	body, err := s.gateway(r.Context())
	p := page{Title: "Console", Nav: "gateway", CSRF: s.csrfToken(sess), Notice: actionNotice(r.URL.Query()), Body: body, Live: true}
	code := http.StatusOK
	if err != nil {
		p.Problem, code = err.Error(), http.StatusBadGateway
	}
	s.render(w, code, "gateway", p)
}

// gatewayStatus reads GET /status of either profile.
func (s *Server) gatewayStatus(ctx context.Context) (host *runtime.HostStatus, cb *runtime.CraftbotStatus, err error) {
	gw := s.opts.Gateway
	raw, err := gw.Get(ctx, "/status")
	if err != nil {
		return nil, nil, err
	}
	var probe struct {
		Profile string `json:"profile"`
	}
	_ = json.Unmarshal(raw, &probe)
	if probe.Profile == plan.ProfileCraftbot {
		cb = &runtime.CraftbotStatus{}
		if err := json.Unmarshal(raw, cb); err != nil {
			return nil, nil, fmt.Errorf("%s answered GET /status with something that is not a status: %v", gw.Where, err)
		}
		return nil, cb, nil
	}
	host = &runtime.HostStatus{}
	if err := json.Unmarshal(raw, host); err != nil {
		return nil, nil, fmt.Errorf("%s answered GET /status with something that is not a status: %v", gw.Where, err)
	}
	return host, nil, nil
}

// gateway reads the gateway's status and, of a volcanic one, each chat's
// servers in detail.
func (s *Server) gateway(ctx context.Context) (*gatewayBody, error) {
	gw := s.opts.Gateway
	b := &gatewayBody{Where: gw.Where}
	host, cb, err := s.gatewayStatus(ctx)
	if err != nil {
		return b, err
	}
	if cb != nil {
		b.Craftbot, b.AutoConnect, b.Actions = true, cb.AutoConnect, cb.Actions
		for _, srv := range cb.Servers {
			b.Servers = append(b.Servers, consoleServer{Name: srv.Name, Transport: srv.Transport, State: srv.State, LastError: srv.LastError,
				Tools: srv.Tools, Starts: srv.Starts, Pid: srv.Pid, StderrTail: srv.StderrTail, Tone: stateTone(srv.State)})
		}
		b.Summary = craftbotSummary(b)
		return b, nil
	}
	b.Processes, b.Discovery = host.Processes, host.Servers
	for _, c := range host.Chats {
		gc := gatewayChat{ID: c.ID, Workspace: c.Workspace}
		for _, srv := range c.Servers {
			cs := consoleServer{Name: srv.Name, State: srv.State, LastError: srv.LastError, Tools: srv.Tools, Pid: srv.Pid}
			if d, err := gw.Server(ctx, c.ID, srv.Name); err != nil {
				cs.Problem = err.Error()
			} else {
				cs.State, cs.LastError, cs.Tools, cs.Pid, cs.StderrTail, cs.Starts = d.State, d.LastError, d.Tools, d.Pid, d.StderrTail, d.Starts
			}
			cs.Tone = stateTone(cs.State)
			gc.Servers = append(gc.Servers, cs)
		}
		b.Chats = append(b.Chats, gc)
	}
	b.Summary = volcanicSummary(b)
	return b, nil
}

// attachRuntime puts the gateway's state of each server beside its
// verdict on the servers page: a craftbot server's state and actions, a
// volcanic server's discovery and the chats it runs in.
func (s *Server) attachRuntime(ctx context.Context, b *serversBody) {
	st, err := s.liveState(ctx)
	if err != nil {
		b.GatewayProblem = err.Error()
		return
	}
	for i := range b.Rows {
		rw := &b.Rows[i]
		rw.Runtime, rw.RuntimeTone = st["rt:"+rw.Name], st["rt:"+rw.Name+":tone"]
		if rw.Runtime == "" {
			rw.Runtime, rw.RuntimeTone = "not in the running plan", "off"
		}
	}
}

// liveState is the gateway's state as the pages' cells show it, by the
// key of each cell (data-live): what GET /state answers, for the pages'
// script to update them without a reload.
func (s *Server) liveState(ctx context.Context) (map[string]string, error) {
	b, err := s.gateway(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{"summary": b.Summary}
	put := func(prefix string, cs consoleServer) {
		out[prefix+":state"] = cs.State
		out[prefix+":state:tone"] = cs.Tone
		out[prefix+":tools"] = fmt.Sprint(cs.Tools)
		out[prefix+":starts"] = fmt.Sprint(cs.Starts)
		out[prefix+":error"] = cs.LastError + cs.Problem
		out[prefix+":stderr"] = strings.Join(cs.StderrTail, "\n")
	}
	if b.Craftbot {
		for _, cs := range b.Servers {
			put("cb:"+cs.Name, cs)
			out["rt:"+cs.Name] = fmt.Sprintf("%s · %d actions", cs.State, cs.Tools)
			out["rt:"+cs.Name+":tone"] = cs.Tone
		}
		return out, nil
	}
	running := map[string]int{}
	var ids []string
	for _, c := range b.Chats {
		ids = append(ids, c.ID)
		for _, cs := range c.Servers {
			put("chat:"+c.ID+":"+cs.Name, cs)
			if cs.State == "running" {
				running[cs.Name]++
			}
		}
	}
	sort.Strings(ids)
	out["chats"] = strings.Join(ids, " ")
	for _, d := range b.Discovery {
		out["disc:"+d.Name+":state"] = d.State
		out["disc:"+d.Name+":tools"] = fmt.Sprint(d.Tools)
		out["disc:"+d.Name+":error"] = d.LastError
		out["rt:"+d.Name] = fmt.Sprintf("%s · %d tools · running in %d of %d chats", d.State, d.Tools, running[d.Name], len(b.Chats))
		out["rt:"+d.Name+":tone"] = stateTone(d.State)
	}
	return out, nil
}

func craftbotSummary(b *gatewayBody) string {
	on := "off"
	if b.AutoConnect {
		on = "on"
	}
	running := 0
	for _, cs := range b.Servers {
		if cs.State == "running" {
			running++
		}
	}
	return fmt.Sprintf("craftbot plan: %d of %d servers running, %d actions served, auto_connect %s", running, len(b.Servers), b.Actions, on)
}

func volcanicSummary(b *gatewayBody) string {
	return fmt.Sprintf("%d server processes running or starting in %d chats", b.Processes, len(b.Chats))
}

// serveState answers GET /state: liveState as JSON, for the script.
func (s *Server) serveState(w http.ResponseWriter, r *http.Request) {
	st, err := s.liveState(r.Context())
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	_ = json.NewEncoder(w).Encode(st)
}

// gatewayAction restarts a server (of a chat, or of a craftbot gateway)
// or resets a chat through the gateway's admin endpoints.
func (s *Server) gatewayAction(w http.ResponseWriter, r *http.Request, sess, action string) {
	chat, name := r.PostForm.Get("chat"), r.PostForm.Get("name")
	if (chat != "" && !gateway.ChatIDPattern.MatchString(chat)) || (chat == "" && action == "reset") {
		s.fail(w, r, http.StatusBadRequest, "the form names no chat")
		return
	}
	var err error
	q := url.Values{"done": {action}}
	if chat != "" {
		q.Set("chat", chat)
	}
	switch {
	case action == "restart" && chat == "":
		q.Set("name", name)
		err = s.opts.Gateway.RestartCraftbot(r.Context(), name)
	case action == "restart":
		q.Set("name", name)
		err = s.opts.Gateway.Restart(r.Context(), chat, name)
	default:
		err = s.opts.Gateway.Reset(r.Context(), chat)
	}
	if err != nil {
		body, _ := s.gateway(r.Context())
		s.render(w, http.StatusBadGateway, "gateway", page{Title: "Console", Nav: "gateway", CSRF: s.csrfToken(sess),
			Problem: fmt.Sprintf("%s refused: %v", action, err), Body: body, Live: true})
		return
	}
	s.log("%s", actionNotice(q))
	http.Redirect(w, r, "/gateway?"+q.Encode(), http.StatusSeeOther)
}

// actionNotice says what a gateway action did, from the page's query.
func actionNotice(q url.Values) string {
	in := ""
	if c := q.Get("chat"); c != "" {
		in = " in chat " + c
	}
	switch q.Get("done") {
	case "restart":
		return fmt.Sprintf("restarted server %s%s: the next call starts it again", q.Get("name"), in)
	case "reset":
		return fmt.Sprintf("reset chat %s", q.Get("chat"))
	}
	return ""
}
