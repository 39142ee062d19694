package remotehttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testmain"
)

func TestMain(m *testing.M) { testmain.Run(m) }

func TestInsecure(t *testing.T) {
	for _, tc := range []struct {
		url    string
		want   bool
		reason string
	}{
		{"ws://mcp.example.com/ws", true, "ws:// to mcp.example.com sends the messages and any credential in clear text over the network; use wss://"},
		{"http://10.0.0.5:8080/sse", true, "http:// to 10.0.0.5 sends the messages and any credential in clear text over the network; use https://"},
		{"WS://Example.COM", true, "ws:// to Example.COM sends the messages and any credential in clear text over the network; use wss://"},
		{"ws://0.0.0.0:80/", true, "ws:// to 0.0.0.0 sends the messages and any credential in clear text over the network; use wss://"},
		{"ws://localhost.evil.com/", true, "ws:// to localhost.evil.com sends the messages and any credential in clear text over the network; use wss://"},
		{"wss://mcp.example.com/ws", false, ""},
		{"https://mcp.example.com/sse", false, ""},
		{"ws://localhost:3000/ws", false, ""},
		{"ws://LOCALHOST./ws", false, ""},
		{"ws://127.0.0.1:3000/ws", false, ""},
		{"ws://127.8.9.10/ws", false, ""},
		{"ws://[::1]:3000/ws", false, ""},
		{"ws://[::ffff:127.0.0.1]/ws", false, ""},
		{"ws://[fe80::1%25eth0]/ws", true, "ws:// to fe80::1%eth0 sends the messages and any credential in clear text over the network; use wss://"},
		{"not a url", false, ""},
		{"ws://", false, ""},
	} {
		got, reason := Insecure(tc.url)
		if got != tc.want || reason != tc.reason {
			t.Errorf("Insecure(%q) = %v, %q; want %v, %q", tc.url, got, reason, tc.want, tc.reason)
		}
	}
}

func TestOrigin(t *testing.T) {
	for raw, want := range map[string]string{
		"https://h.example/mcp":      "https://h.example:443",
		"https://H.EXAMPLE:443/":     "https://h.example:443",
		"http://h.example/":          "http://h.example:80",
		"http://[::1]:8080/":         "http://[::1]:8080",
		"http://h.example:8080/a?b=": "http://h.example:8080",
		"ws://h.example/ws":          "http://h.example:80",
		"wss://h.example/ws":         "https://h.example:443",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := Origin(u); got != want {
			t.Errorf("%s: %s", raw, got)
		}
	}
}

// The guard sends the headers to the url's origin, follows a redirect
// within it, and refuses one to another origin (a real server on
// 127.0.0.1 with another port) before anything is sent there.
func TestGuard(t *testing.T) {
	var foreignHits atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreignHits.Add(1)
	}))
	defer foreign.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Header.Get("X-Key")) })
	mux.Handle("/moved", http.RedirectHandler("/here", http.StatusTemporaryRedirect))
	mux.Handle("/away", http.RedirectHandler(foreign.URL+"/here", http.StatusTemporaryRedirect))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	g := NewGuard(u, http.Header{"X-Key": {"k-123"}}, nil)
	defer g.CloseIdleConnections()
	client := Client(g)
	for _, path := range []string{"/here", "/moved"} {
		resp, err := client.Post(srv.URL+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != "k-123" {
			t.Errorf("%s: the server got the header %q", path, got)
		}
	}
	if g.Refused() != nil {
		t.Errorf("refused within the origin: %v", g.Refused())
	}
	_, err := client.Post(srv.URL+"/away", "application/json", strings.NewReader(`{"secret":"arguments"}`))
	want := "the server sent mcpc to another origin (" + foreign.URL + "); mcpc talks only to the origin of the configured url and sent nothing there"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("redirected away: %v, want %q", err, want)
	}
	if r := g.Refused(); r == nil || r.Error() != want {
		t.Errorf("Refused() = %v", r)
	}
	if n := foreignHits.Load(); n != 0 {
		t.Errorf("%d requests reached the other origin", n)
	}
}
