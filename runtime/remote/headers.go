package remote

import (
	"fmt"
	"net/textproto"
	"sort"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/redact"
)

// Headers are the HTTP headers sent with every request to one remote server:
// the sealed part of its entry. Names are kept as written; values are
// secrets and must never be printed.
type Headers map[string]string

// Names returns the header names, sorted case-insensitively: the only part of
// the headers that any output shows.
func (h Headers) Names() []string {
	out := make([]string, 0, len(h))
	for name := range h {
		out = append(out, name)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := strings.ToLower(out[i]), strings.ToLower(out[j])
		if a != b {
			return a < b
		}
		return out[i] < out[j]
	})
	return out
}

// Secrets returns the values to redact for these headers: every value and,
// for a value of the form "<scheme> <credential>" (Bearer, Basic, Token …),
// the credential alone.
func (h Headers) Secrets() []string {
	var out []string
	for _, v := range h {
		out = append(out, v)
		if scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok && isToken(scheme) {
			if cred = strings.TrimSpace(cred); cred != "" {
				out = append(out, cred)
			}
		}
	}
	sort.Strings(out)
	return out
}

// reservedHeaders are set by the HTTP client or the MCP transport itself.
var reservedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Content-Type": true, "Transfer-Encoding": true,
	"Connection": true, "Upgrade": true, "Te": true, "Trailer": true, "Keep-Alive": true,
	"Proxy-Connection": true, "Accept": true, "Mcp-Session-Id": true, "Mcp-Protocol-Version": true,
	"Last-Event-Id": true, "Cookie2": true,
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2), as a header
// name must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validValue reports whether v may be sent as a header value: no control
// characters other than tab (a CR or LF would start another header).
func validValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// AddHeader adds one "Name: value" header to h. The error never contains
// the value.
func (h Headers) AddHeader(line string) error {
	name, value, ok := strings.Cut(line, ":")
	name = strings.TrimSpace(name)
	if !ok || !isToken(name) {
		shown := name
		if !ok {
			shown = "(no colon)"
		}
		return fmt.Errorf("a header must be written \"Name: value\" with a name of letters, digits and -; got a line whose name is %s", quoteName(shown))
	}
	value = strings.TrimSpace(value)
	canon := textproto.CanonicalMIMEHeaderKey(name)
	if reservedHeaders[canon] {
		return fmt.Errorf("header %s is set by mcpc's HTTP client itself and cannot be configured", name)
	}
	if !validValue(value) {
		return fmt.Errorf("the value of header %s contains a control character", name)
	}
	for existing := range h {
		if strings.EqualFold(existing, name) {
			return fmt.Errorf("header %s is given twice", name)
		}
	}
	h[name] = value
	return nil
}

// quoteName shows a would-be header name in an error, cut short: a line
// without a colon may be a pasted token, so at most a few characters of it
// are shown.
func quoteName(s string) string {
	if s == "(no colon)" {
		return s
	}
	if len(s) > 24 || strings.ContainsAny(s, " \t") {
		return "not a valid name"
	}
	return fmt.Sprintf("%q", s)
}

// ParseKey reads the key of `mcpc remote add` given on standard input: "-"
// means no headers; lines "Name: value" set headers; anything else must be
// one bare token, which becomes "Authorization: Bearer <token>". Blank lines
// are ignored. Errors never contain the input.
func ParseKey(text string) (Headers, error) {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	h := Headers{}
	switch {
	case len(lines) == 0:
		return nil, fmt.Errorf("no key given: type a token, \"Name: value\" lines, or - for none")
	case len(lines) == 1 && lines[0] == "-":
		return h, nil
	case looksLikeHeader(lines[0]):
		for i, l := range lines {
			if err := h.AddHeader(l); err != nil {
				return nil, fmt.Errorf("line %d: %v", i+1, err)
			}
		}
		return h, nil
	case len(lines) == 1:
		return Bearer(lines[0])
	}
	return nil, fmt.Errorf("the key has %d lines but its first line is not a \"Name: value\" header: give one bare token, or one header per line", len(lines))
}

// looksLikeHeader reports whether a key line is "Name: value" rather than a
// bare token (tokens have no ": ").
func looksLikeHeader(line string) bool {
	name, _, ok := strings.Cut(line, ":")
	return ok && isToken(strings.TrimSpace(name)) && strings.Contains(line, ": ")
}

// Bearer returns the headers for a bare token: Authorization: Bearer <token>.
func Bearer(token string) (Headers, error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, fmt.Errorf("the bearer token is empty")
	}
	if strings.ContainsAny(token, " \t") || !validValue(token) {
		return nil, fmt.Errorf("a bearer token is one word without spaces or control characters")
	}
	return Headers{"Authorization": "Bearer " + token}, nil
}

// Redactor returns a redactor for the secrets of every given header set, in
// every form of redact.SecretForms.
func Redactor(sets ...Headers) *redact.Redactor {
	var all []string
	for _, h := range sets {
		for _, v := range h.Secrets() {
			all = append(all, redact.SecretForms(v)...)
		}
	}
	return redact.New(all)
}
