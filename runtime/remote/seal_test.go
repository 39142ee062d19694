package remote

import (
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func testServer() Server {
	return Server{Name: "notes", URL: "https://mcp.example.com/mcp", Transport: "auto", Tools: []string{"search", "get"}, Auth: "headers"}
}

func mustKey(t testing.TB, secret string) *Key {
	t.Helper()
	k, err := NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealRoundTrip(t *testing.T) {
	k := mustKey(t, "host-secret")
	h := Headers{"Authorization": "Bearer tok-1", "X-Team": "blue"}
	for _, s := range []Server{testServer(), {Name: "x", URL: "http://127.0.0.1/m", Transport: "sse", Tools: nil, Auth: "headers"}, {Name: "e", URL: "http://h/", Transport: "http", Tools: []string{}, Auth: "headers"}} {
		sealed, err := k.Seal("chat-1", s, h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := k.Open("chat-1", s, sealed)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if !reflect.DeepEqual(got, h) {
			t.Errorf("%s: opened %v", s.Name, got)
		}
	}
	// No headers is sealed too: the entry is still bound to the scope.
	sealed, _ := k.Seal("chat-1", testServer(), Headers{})
	if got, err := k.Open("chat-1", testServer(), sealed); err != nil || len(got) != 0 {
		t.Errorf("empty headers: %v %v", got, err)
	}
	// A fresh nonce each time.
	a, _ := k.Seal("chat-1", testServer(), h)
	b, _ := k.Seal("chat-1", testServer(), h)
	if a == b {
		t.Error("two seals of the same entry are equal: the nonce is not random")
	}
}

// Any change to a visible field, the scope, the secret or one byte of the
// sealed value makes the entry not open.
func TestSealBindsEveryFieldScopeAndSecret(t *testing.T) {
	k := mustKey(t, "host-secret")
	s := testServer()
	sealed, err := k.Seal("chat-1", s, Headers{"Authorization": "Bearer tok-1"})
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]func(*Server){
		"name":           func(s *Server) { s.Name = "notes2" },
		"url":            func(s *Server) { s.URL = "https://evil.example.com/mcp" },
		"url query":      func(s *Server) { s.URL += "?x=1" },
		"transport":      func(s *Server) { s.Transport = "sse" },
		"tools":          func(s *Server) { s.Tools = []string{"search"} },
		"tools order":    func(s *Server) { s.Tools = []string{"get", "search"} },
		"tools null":     func(s *Server) { s.Tools = nil },
		"tools empty":    func(s *Server) { s.Tools = []string{} },
		"tools one more": func(s *Server) { s.Tools = append(s.Tools, "delete") },
		"auth":           func(s *Server) { s.Auth = "oauth" },
	}
	for name, change := range changes {
		c := s
		c.Tools = append([]string(nil), s.Tools...)
		change(&c)
		if _, err := k.Open("chat-1", c, sealed); !errors.Is(err, ErrNotOpen) {
			t.Errorf("%s changed: err %v, want ErrNotOpen", name, err)
		}
	}
	if _, err := k.Open("chat-2", s, sealed); !errors.Is(err, ErrNotOpen) {
		t.Errorf("other scope: %v", err)
	}
	if _, err := mustKey(t, "other-secret").Open("chat-1", s, sealed); !errors.Is(err, ErrNotOpen) {
		t.Errorf("other secret: %v", err)
	}
	raw, _ := base64.StdEncoding.DecodeString(sealed)
	for i := range raw {
		for _, bit := range []byte{0x01, 0x80} {
			b := append([]byte(nil), raw...)
			b[i] ^= bit
			if _, err := k.Open("chat-1", s, base64.StdEncoding.EncodeToString(b)); !errors.Is(err, ErrNotOpen) {
				t.Fatalf("byte %d flipped: %v", i, err)
			}
		}
	}
	if _, err := k.Open("chat-1", s, sealed); err != nil {
		t.Fatalf("the original no longer opens: %v", err)
	}
	for _, bad := range []string{"", "not base64!", "AAAA", base64.StdEncoding.EncodeToString(make([]byte, 27)), sealed[:len(sealed)-4], sealed + "AAAA", " " + sealed} {
		if _, err := k.Open("chat-1", s, bad); err == nil {
			t.Errorf("%q opened", bad)
		}
	}
}

// A vector made with Python's cryptography package (HKDF-SHA256 and
// AESGCM), independently of this code, exactly as SPEC §3 describes: a host
// written in another language produces entries mcpc opens.
func TestSealInteroperates(t *testing.T) {
	const sealed = "AAECAwQFBgcICQoLOAWbEqJaeCsCt2BdUlRaKxUMnxIis4zpcNeoons6L/wD8t1T3qhgeBN0eOVnuVeHx9s0f2bDNDvk4y10Kz2yHe2CCzjRYznlUhWg2Q+U4XI="
	s := Server{Name: "notes", URL: "https://mcp.example.com/mcp?team=a&b=<c>", Transport: "auto", Tools: []string{"search", "get"}, Auth: "headers"}
	const ad = `["mcpc/remote/v1","telegram:42","notes","https://mcp.example.com/mcp?team=a&b=<c>","auto",["search","get"],"headers"]`
	if got := string(AssociatedData("telegram:42", s)); got != ad {
		t.Fatalf("associated data\n got  %s\n want %s", got, ad)
	}
	h, err := mustKey(t, "vector-secret-0123456789").Open("telegram:42", s, sealed)
	if err != nil {
		t.Fatal(err)
	}
	want := Headers{"Authorization": "Bearer tok-123", "X-Org": "équipe"}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("opened %v", h)
	}
}

func TestAssociatedDataEscaping(t *testing.T) {
	s := Server{Name: "n", URL: "u\"\\\n\x01é\u2028", Transport: "auto", Tools: nil, Auth: "headers"}
	got := string(AssociatedData("s", s))
	want := `["mcpc/remote/v1","s","n","u\"\\\n\u0001é` + "\u2028" + `","auto",null,"headers"]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestSecretPrefersMCPEncryptionSecret(t *testing.T) {
	env := map[string]string{}
	look := func(k string) string { return env[k] }
	if _, _, err := Secret(look); !errors.Is(err, ErrNoSecret) {
		t.Errorf("neither set: %v", err)
	}
	env["TELEGRAM_BOT_TOKEN"] = "bot"
	if s, from, _ := Secret(look); s != "bot" || from != "TELEGRAM_BOT_TOKEN" {
		t.Errorf("fallback: %q %q", s, from)
	}
	env["MCP_ENCRYPTION_SECRET"] = ""
	if s, _, _ := Secret(look); s != "bot" {
		t.Errorf("an empty MCP_ENCRYPTION_SECRET counts as unset: %q", s)
	}
	env["MCP_ENCRYPTION_SECRET"] = "mcp"
	if s, from, _ := Secret(look); s != "mcp" || from != "MCP_ENCRYPTION_SECRET" {
		t.Errorf("preferred: %q %q", s, from)
	}
	if _, err := NewKey(""); !errors.Is(err, ErrNoSecret) {
		t.Errorf("NewKey(\"\"): %v", err)
	}
	// Different secrets give different keys.
	s := testServer()
	sealed, _ := mustKey(t, "bot").Seal("c", s, Headers{})
	if _, err := mustKey(t, "mcp").Open("c", s, sealed); !errors.Is(err, ErrNotOpen) {
		t.Errorf("a bot-token seal opens with MCP_ENCRYPTION_SECRET: %v", err)
	}
}

func TestHeaderSecretsAndParsing(t *testing.T) {
	h, err := ParseKey("  tok-abc  \n")
	if err != nil || h["Authorization"] != "Bearer tok-abc" {
		t.Fatalf("bare token: %v %v", h, err)
	}
	secrets := strings.Join(h.Secrets(), "|")
	if !strings.Contains(secrets, "Bearer tok-abc") || !strings.Contains(secrets, "|tok-abc") && !strings.HasPrefix(secrets, "tok-abc") {
		t.Errorf("secrets %q", secrets)
	}
	h, err = ParseKey("X-Api-Key: k1\nAuthorization: Token t2\n\n")
	if err != nil || h["X-Api-Key"] != "k1" || h["Authorization"] != "Token t2" {
		t.Fatalf("header lines: %v %v", h, err)
	}
	if got := strings.Join(h.Names(), ","); got != "Authorization,X-Api-Key" {
		t.Errorf("names %q", got)
	}
	if h, err := ParseKey("-\n"); err != nil || len(h) != 0 {
		t.Errorf("-: %v %v", h, err)
	}
	const canary = "CANARY-secret-value"
	for _, bad := range []string{"", "two words " + canary, canary + "\n" + canary, "Host: " + canary, "X-A: 1\nX-A: " + canary, "X-A: 1\nnot a header " + canary, "Bad Name: " + canary} {
		_, err := ParseKey(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "CANARY") {
			t.Errorf("error leaks the key: %v", err)
		}
	}
	hh := Headers{}
	if err := hh.AddHeader("X-A: a\r\nInjected: " + canary); err == nil || strings.Contains(err.Error(), canary) {
		t.Errorf("control characters: %v", err)
	}
}
