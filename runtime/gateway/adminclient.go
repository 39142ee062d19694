package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpc-dev/mcpc/runtime"
)

// AdminClient reads and drives a running gateway's admin endpoints (GET
// /status, GET /chats/{id}/servers/{name}, POST /chats/{id}/reset, POST
// /chats/{id}/servers/{name}/restart, the tools endpoints; a craftbot
// gateway's too): the client of mcpc status and of mcpc ui's console,
// beside the server it talks to.
type AdminClient struct {
	// Where names the gateway in messages: its URL or its status socket.
	Where string
	// Base is the URL the endpoint paths follow (http://HOST:PORT).
	Base string
	// Token, if set, is sent as "Authorization: Bearer <token>". It
	// appears in no error.
	Token  string
	Client *http.Client
}

// maxAdminAnswer bounds one answer of the admin endpoints.
const maxAdminAnswer = 64 << 20

// AdminError is an answer other than 200, with the gateway's message.
type AdminError struct {
	Where, Method, Path string
	Code                int
	Msg                 string
}

func (e *AdminError) Error() string {
	return fmt.Sprintf("%s: %s %s: %d %s: %s", e.Where, e.Method, e.Path, e.Code, http.StatusText(e.Code), e.Msg)
}

// UnreachableError is a gateway that gave no answer at all.
type UnreachableError struct {
	Where string
	Err   error
}

func (e *UnreachableError) Error() string { return fmt.Sprintf("cannot read %s: %v", e.Where, e.Err) }
func (e *UnreachableError) Unwrap() error { return e.Err }

// Get reads one admin endpoint.
func (c *AdminClient) Get(ctx context.Context, path string) ([]byte, error) {
	return c.do(ctx, http.MethodGet, path)
}

// Post calls one admin endpoint that acts (reset, restart).
func (c *AdminClient) Post(ctx context.Context, path string) ([]byte, error) {
	return c.do(ctx, http.MethodPost, path)
}

func (c *AdminClient) do(ctx context.Context, method, path string) ([]byte, error) {
	return c.send(ctx, method, path, nil)
}

func (c *AdminClient) send(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in Where already
		}
		return nil, &UnreachableError{Where: c.Where, Err: err}
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, maxAdminAnswer))
	if err != nil {
		return nil, &UnreachableError{Where: c.Where, Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(body))
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		return nil, &AdminError{Where: c.Where, Method: method, Path: path, Code: resp.StatusCode, Msg: msg}
	}
	return body, nil
}

// Status reads GET /status.
func (c *AdminClient) Status(ctx context.Context) (runtime.HostStatus, error) {
	var st runtime.HostStatus
	raw, err := c.Get(ctx, "/status")
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("%s answered GET /status with something that is not a status: %v", c.Where, err)
	}
	return st, nil
}

// Server reads GET /chats/{chat}/servers/{name}.
func (c *AdminClient) Server(ctx context.Context, chat, name string) (runtime.ServerDetail, error) {
	var d runtime.ServerDetail
	raw, err := c.Get(ctx, ServerPath(chat, name))
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return d, fmt.Errorf("%s answered with something that is not a server's details: %v", c.Where, err)
	}
	return d, nil
}

// Restart calls POST /chats/{chat}/servers/{name}/restart.
func (c *AdminClient) Restart(ctx context.Context, chat, name string) error {
	_, err := c.Post(ctx, ServerPath(chat, name)+"/restart")
	return err
}

// Reset calls POST /chats/{chat}/reset.
func (c *AdminClient) Reset(ctx context.Context, chat string) error {
	_, err := c.Post(ctx, "/chats/"+url.PathEscape(chat)+"/reset")
	return err
}

// ServerPath is the admin path of one server in one chat.
func ServerPath(chat, name string) string {
	return "/chats/" + url.PathEscape(chat) + "/servers/" + url.PathEscape(name)
}

// toolsPath is the admin path of a chat's tools; a craftbot gateway's
// (one chat for all) when chat is "".
func toolsPath(chat string) string {
	if chat == "" {
		return "/tools"
	}
	return "/chats/" + url.PathEscape(chat) + "/tools"
}

// Tools reads GET /chats/{chat}/tools (GET /tools of a craftbot gateway
// when chat is ""): the tools as the chat's agent sees them.
func (c *AdminClient) Tools(ctx context.Context, chat string) ([]AdminTool, error) {
	raw, err := c.Get(ctx, toolsPath(chat))
	if err != nil {
		return nil, err
	}
	var out []AdminTool
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s answered with something that is not a tool list: %v", c.Where, err)
	}
	return out, nil
}

// CallTool calls POST /chats/{chat}/tools/call (POST /tools/call of a
// craftbot gateway when chat is "") with the tool's name and arguments (a
// JSON object, or nil).
func (c *AdminClient) CallTool(ctx context.Context, chat, name string, args json.RawMessage) (AdminCallResult, error) {
	var out AdminCallResult
	body, err := json.Marshal(AdminCall{Name: name, Arguments: args})
	if err != nil {
		return out, err
	}
	raw, err := c.send(ctx, http.MethodPost, toolsPath(chat)+"/call", body)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("%s answered with something that is not a call's result: %v", c.Where, err)
	}
	return out, nil
}

// RestartCraftbot calls a craftbot gateway's POST /servers/{name}/restart.
func (c *AdminClient) RestartCraftbot(ctx context.Context, name string) error {
	_, err := c.Post(ctx, "/servers/"+url.PathEscape(name)+"/restart")
	return err
}
