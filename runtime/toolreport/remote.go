package toolreport

import (
	"context"
	"fmt"

	"github.com/mcpc-dev/mcpc/compile/naming"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remoteset"
)

// addRemote connects the remote servers of o.Remote's workspace sealed for
// its scope (handshake and tools/list, as a chat does), and adds a row per
// allowed tool, named as a chat names it against the names in taken
// (built-ins and the stdio tools). A server that cannot be reached is
// server-start-failed at its entry, as a stdio server that does not start;
// the problems of servers.json itself are its rules (remote-*), as validate
// reports them. When ctx ends it returns nil: the caller sees ctx.
func (r *Report) addRemote(ctx context.Context, o Options, taken map[string]bool, host *redact.Redactor) error {
	workspace, scope := o.Remote.Workspace, o.Remote.Scope
	f, err := remote.Load(workspace)
	if err != nil {
		return &InputError{msg: host.Redact(err.Error())}
	}
	if !f.Exists {
		if o.Watch.NoRemoteFile != nil {
			o.Watch.NoRemoteFile(f.Path)
		}
		return nil
	}
	var ds []diag.Diagnostic
	ds = append(ds, f.Diagnostics...)
	secret, from, serr := remote.Secret(func(name string) string { return o.Env.Vars[name] })
	if f.Problem == "" {
		if serr == nil {
			key, err := remote.NewKey(secret)
			if err != nil {
				return err
			}
			ds = append(ds, remote.CheckSealed(f, key, scope, from)...)
		} else {
			for _, e := range f.Entries {
				if e.Valid() {
					ds = append(ds, rules.RemoteSealed.At(e.SealedPos,
						fmt.Sprintf("%s: the sealed part cannot be opened: the host environment has no %s or %s; the host skips it", e.Label(), remote.SecretVar, remote.FallbackSecretVar),
						"give the host secret with --env-file or --env "+remote.SecretVar+"=…"))
				}
			}
		}
	}
	m, err := remoteset.New(workspace, scope, remoteset.Options{Secret: secret, Dial: o.Remote.Dial}, remoteset.Hooks{})
	if err != nil {
		return err
	}
	defer m.Close()
	m.Start()
	if o.Watch.Connecting != nil {
		st, _, _ := m.Status()
		o.Watch.Connecting(f.Path, len(st))
	}
	l, err := m.List(ctx, func(name string) bool { return taken[name] })
	if err != nil {
		return nil // interrupted: the caller sees ctx
	}
	// Every text of this part is redacted here: the host's secrets and the
	// header values of the entries that opened.
	red := func(s string) string { return host.Redact(m.Redact(s)) }
	r.Sources = f.Sources(red)
	r.RemoteServers = len(l.Servers)

	// The naming of every connected server's allowed tools, as the chat's
	// listing made it (naming.Assign), to give each tool its rule.
	var groups []naming.ServerTools
	for _, s := range l.Servers {
		if s.Phase == remoteset.Connected {
			groups = append(groups, naming.ServerTools{Server: s.Name, Tools: s.ServerTools, Remote: true})
		}
	}
	named := map[string][]naming.Result{}
	for _, res := range naming.Assign(groups, naming.Options{Builtins: []string{}}) {
		named[res.Server] = append(named[res.Server], res)
	}
	registered := map[string]string{} // server + "\x00" + tool → visible name
	for _, t := range l.Tools {
		registered[t.Server+"\x00"+t.ServerTool] = t.Name
	}
	for _, s := range l.Servers {
		pos := diag.Pos{File: f.Path}
		if es := f.Find(s.Name); len(es) > 0 {
			pos = es[0].Pos
		}
		if o.Watch.RemoteServer != nil {
			o.Watch.RemoteServer(s.Name, red(s.State))
		}
		if s.Phase != remoteset.Connected {
			reason := red(s.Reason)
			if reason == "" {
				reason = string(s.Phase)
			}
			rule := rules.ServerStartFailed.ID
			r.Rows = append(r.Rows, Row{Server: s.Name, Rule: &rule, Message: reason})
			ds = append(ds, rules.ServerStartFailed.At(pos,
				fmt.Sprintf("remote server %q did not list its tools: %s", s.Name, reason),
				fmt.Sprintf("check its url and key: mcpc remote list --workspace %s --scope %s; it contributes no tools", workspace, scope)))
			continue
		}
		for _, name := range s.Missing {
			ds = append(ds, rules.RemoteToolMissing.At(pos,
				red(fmt.Sprintf("remote server %q does not offer the allowlisted tool %q", s.Name, name)),
				fmt.Sprintf("mcpc remote tools %s --workspace %s --scope %s shows the tools it offers", s.Name, workspace, scope)))
		}
		for _, res := range named[s.Name] {
			row := Row{Server: s.Name, Tool: ptr(red(res.Tool))}
			visible, ok := registered[s.Name+"\x00"+res.Tool]
			switch {
			case ok:
				row.Name = ptr(visible)
				if res.Rule != "" {
					row.Rule, row.Message = ptr(res.Rule), red(res.Message)
					ds = append(ds, rules.Of(res.Rule).At(pos, red(res.Message), red(res.Suggestion)))
				}
			case res.Registered():
				// Named, then skipped: a built-in or a stdio tool has the name.
				msg := red(fmt.Sprintf("tool %q of remote server %q is skipped: the name %q is already used by another tool", res.Tool, s.Name, res.Name))
				row.Rule, row.Message = ptr(naming.RuleCollision), msg
				ds = append(ds, rules.ToolNameCollision.At(pos, msg, "add the remote server under another name"))
			default:
				row.Rule, row.Message = ptr(res.Rule), red(res.Message)
				ds = append(ds, rules.Of(res.Rule).At(pos, red(res.Message), red(res.Suggestion)))
			}
			r.Rows = append(r.Rows, row)
		}
	}
	for i := range ds {
		ds[i].Message = red(ds[i].Message)
		ds[i].Suggestion = red(ds[i].Suggestion)
	}
	r.Diagnostics = append(r.Diagnostics, ds...)
	return nil
}
