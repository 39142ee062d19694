package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/gateway"
)

// gatewayBody is the gateway page: what GET /status and GET
// /chats/{id}/servers/{name} answer (the gateway redacts them).
type gatewayBody struct {
	Where     string
	Processes int
	Discovery []runtime.DiscoveryStatus
	Chats     []gatewayChat
}

type gatewayChat struct {
	ID, Workspace string
	Servers       []gatewayServer
}

type gatewayServer struct {
	runtime.ServerStatus
	StderrTail []string
	Starts     int
	// Problem says why the server's details could not be read.
	Problem string
}

func (s *Server) gatewayPage(w http.ResponseWriter, r *http.Request, sess string) {
	body, err := s.gateway(r.Context())
	p := page{Title: "Gateway", Nav: "gateway", CSRF: s.csrfToken(sess), Notice: actionNotice(r.URL.Query()), Body: body}
	code := http.StatusOK
	if err != nil {
		p.Problem, code = err.Error(), http.StatusBadGateway
	}
	s.render(w, code, "gateway", p)
}

// gateway reads the gateway's status and each chat's servers in detail.
func (s *Server) gateway(ctx context.Context) (*gatewayBody, error) {
	gw := s.opts.Gateway
	b := &gatewayBody{Where: gw.Where}
	st, err := gw.Status(ctx)
	if err != nil {
		return b, err
	}
	b.Processes, b.Discovery = st.Processes, st.Servers
	for _, c := range st.Chats {
		gc := gatewayChat{ID: c.ID, Workspace: c.Workspace}
		for _, srv := range c.Servers {
			gs := gatewayServer{ServerStatus: srv}
			if d, err := gw.Server(ctx, c.ID, srv.Name); err != nil {
				gs.Problem = err.Error()
			} else {
				gs.ServerStatus, gs.StderrTail, gs.Starts = d.ServerStatus, d.StderrTail, d.Starts
			}
			gc.Servers = append(gc.Servers, gs)
		}
		b.Chats = append(b.Chats, gc)
	}
	return b, nil
}

// gatewayAction restarts a chat's server or resets a chat through the
// gateway's admin endpoints (with the admin token, which stays here).
func (s *Server) gatewayAction(w http.ResponseWriter, r *http.Request, sess, action string) {
	chat, name := r.PostForm.Get("chat"), r.PostForm.Get("name")
	if !gateway.ChatIDPattern.MatchString(chat) {
		s.fail(w, r, http.StatusBadRequest, "the form names no chat")
		return
	}
	var err error
	q := url.Values{"done": {action}, "chat": {chat}}
	if action == "restart" {
		q.Set("name", name)
		err = s.opts.Gateway.Restart(r.Context(), chat, name)
	} else {
		err = s.opts.Gateway.Reset(r.Context(), chat)
	}
	if err != nil {
		body, _ := s.gateway(r.Context())
		s.render(w, http.StatusBadGateway, "gateway", page{Title: "Gateway", Nav: "gateway", CSRF: s.csrfToken(sess),
			Problem: fmt.Sprintf("%s refused: %v", action, err), Body: body})
		return
	}
	s.log("%s", actionNotice(q))
	http.Redirect(w, r, "/gateway?"+q.Encode(), http.StatusSeeOther)
}

// actionNotice says what a gateway action did, from the page's query.
func actionNotice(q url.Values) string {
	switch q.Get("done") {
	case "restart":
		return fmt.Sprintf("restarted server %s in chat %s", q.Get("name"), q.Get("chat"))
	case "reset":
		return fmt.Sprintf("reset chat %s", q.Get("chat"))
	}
	return ""
}
