package plandiff

import (
	"net/url"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
)

// Redacted stands in output for a value that may be a secret.
const Redacted = "[REDACTED]"

// showEnv is what output may show of an env value: null (the variable is
// removed), "" and a value made only of templates (${env:NAME},
// ${config:KEY}, ${workspace}) as they are — they name where a value comes
// from, not the value; anything else is [REDACTED]. A literal value may be
// a setting or a token written into the file, and mcpc cannot tell which,
// so it shows neither; a reviewer still sees that it changed, since only
// values that differ are listed.
func showEnv(v *string) any {
	switch {
	case v == nil:
		return nil
	case *v == "" || onlyTemplates(*v):
		return *v
	}
	return Redacted
}

// onlyTemplates reports whether s is nothing but ${…} references of a kind
// a plan holds (workspace, env:NAME, config:KEY), with no text around or
// between them.
func onlyTemplates(s string) bool {
	refs := plan.Templates(s)
	if len(refs) == 0 {
		return false
	}
	at := 0
	for _, r := range refs {
		if r.Start != at || r.Kind == plan.TemplateUnterminated {
			return false
		}
		if r.Kind == plan.TemplateUnknown && !strings.HasPrefix(r.Body, "config:") {
			return false
		}
		at = r.End
	}
	return at == len([]rune(s))
}

// showURL is what output may show of a remote server's URL: scheme, host
// and path, with the user info, each query value and the fragment
// [REDACTED] (a token in a query string is a secret written literally).
// Query parameter names stay, in their order, so a reviewer sees which
// parameter changed; a part without "=" may be a bare token and goes whole.
// The path is shown, as `mcpc remote list` shows it. A URL that does not parse is [REDACTED] whole.
func showURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return Redacted
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme + "://")
	}
	if u.User != nil {
		b.WriteString(Redacted + "@")
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteString("?")
		for i, part := range strings.Split(u.RawQuery, "&") {
			if i > 0 {
				b.WriteString("&")
			}
			if name, _, hasValue := strings.Cut(part, "="); hasValue {
				b.WriteString(name + "=" + Redacted)
			} else if part != "" {
				b.WriteString(Redacted) // a bare token, not a name
			}
		}
	}
	if u.Fragment != "" || u.RawFragment != "" {
		b.WriteString("#" + Redacted)
	}
	return b.String()
}
