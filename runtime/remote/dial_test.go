package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
)

const canaryToken = "CANARY-tok-9f8e7d"

// patient is the dial of every handshake that must succeed, or fail for a
// reason other than time: it waits as long as the test may run, so that a
// slow machine never turns a success into "no answer within …". Tests of
// the timeouts use short ones against a server that never answers.
var patient = DialOptions{HandshakeTimeout: testservers.Patient, ListTimeout: testservers.Patient}

func toolNames(r *ProbeResult) string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return strings.Join(out, ",")
}

func TestProbeTransports(t *testing.T) {
	httpSrv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	sseSrv := remotetest.Start(t, remotetest.Options{Transport: "sse"})
	for _, c := range []struct {
		url, transport, want string
	}{
		{httpSrv.URL, "http", "http"},
		{httpSrv.URL, "auto", "http"},
		{sseSrv.URL, "sse", "sse"},
		{sseSrv.URL, "auto", "sse"}, // Streamable HTTP is refused (400), SSE works
	} {
		res, err := Probe(context.Background(), Server{Name: "s", URL: c.url, Transport: c.transport, Auth: "headers"}, Headers{}, patient)
		if err != nil {
			t.Errorf("%s %s: %v", c.url, c.transport, err)
			continue
		}
		if res.Transport != c.want || toolNames(res) != "drop,echo,fail,slow,whoami" || res.ServerName != "remotetest" || res.ServerVersion != "1.2.3" {
			t.Errorf("%s %s: %+v %s", c.url, c.transport, res, toolNames(res))
		}
	}
	// http only: an SSE server does not answer as Streamable HTTP.
	_, err := Probe(context.Background(), Server{Name: "s", URL: sseSrv.URL, Transport: "http", Auth: "headers"}, Headers{}, patient)
	if err == nil || err.Error() != "400 (Bad Request)" {
		t.Errorf("sse server over http: %v", err)
	}
}

func TestProbeReasons(t *testing.T) {
	for _, transport := range []string{"http", "sse"} {
		srv := remotetest.Start(t, remotetest.Options{Transport: transport, Token: canaryToken})
		s := Server{Name: "s", URL: srv.URL + "?key=" + canaryToken, Transport: "auto", Auth: "headers"}
		_, err := Probe(context.Background(), s, Headers{}, patient)
		var f *Failure
		if !errors.As(err, &f) || f.Reason != "401 (Unauthorized)" || f.Status != 401 {
			t.Errorf("%s without the token: %v", transport, err)
		}
		wrong, _ := Bearer("wrong-" + canaryToken)
		if _, err := Probe(context.Background(), s, wrong, patient); err == nil || err.Error() != "401 (Unauthorized)" {
			t.Errorf("%s with a wrong token: %v", transport, err)
		}
		right, _ := Bearer(canaryToken)
		if res, err := Probe(context.Background(), s, right, patient); err != nil || res.Transport != transport {
			t.Errorf("%s with the token: %v", transport, err)
		}
	}

	never := remotetest.NeverAnswers(t)
	_, err := Probe(context.Background(), Server{Name: "s", URL: never, Transport: "auto", Auth: "headers"}, Headers{}, DialOptions{HandshakeTimeout: 300 * time.Millisecond})
	var f *Failure
	// The reason alone shows that auto did not try SSE after the timeout:
	// it would say "Streamable HTTP: …; SSE: …".
	if !errors.As(err, &f) || f.Reason != "no answer within 300ms" || !f.Timeout {
		t.Errorf("never answers: %v", err)
	}
	if (DialOptions{}).handshake() != 15*time.Second || (DialOptions{}).list() != 15*time.Second {
		t.Error("the default timeouts are not 15s")
	}
	if got := formatDuration(15 * time.Second); got != "15s" {
		t.Errorf("%q", got)
	}

	_, err = Probe(context.Background(), Server{Name: "s", URL: remotetest.Refused(t), Transport: "auto", Auth: "headers"}, Headers{}, patient)
	if err == nil || err.Error() != "connection refused" {
		t.Errorf("refused: %v", err)
	}
	_, err = Probe(context.Background(), Server{Name: "s", URL: "http://host.invalid/mcp", Transport: "http", Auth: "headers"}, Headers{}, patient)
	if err == nil || err.Error() != "host not found" && !strings.HasPrefix(err.Error(), "DNS") {
		t.Errorf("no such host: %v", err)
	}
	// A plain web server: not MCP.
	web := remotetest.Start(t, remotetest.Options{Transport: "http"})
	_, err = Probe(context.Background(), Server{Name: "s", URL: web.HTTP.URL + "/nothing-here", Transport: "http", Auth: "headers"}, Headers{}, patient)
	if err == nil || err.Error() != "404 (Not Found)" {
		t.Errorf("404: %v", err)
	}
	// https to an http port.
	_, err = Probe(context.Background(), Server{Name: "s", URL: strings.Replace(web.URL, "http://", "https://", 1), Transport: "http", Auth: "headers"}, Headers{}, patient)
	if err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("https to http: %v", err)
	}
	// Cancelled by the caller.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	if _, err := Probe(ctx, Server{Name: "s", URL: never, Transport: "http", Auth: "headers"}, Headers{}, patient); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// A server that redirects mcpc to another origin gets nothing sent there:
// neither its headers nor the session's messages (the initialize request,
// later the tool arguments) leave the configured origin. Both servers are
// real, on 127.0.0.1 with different ports: two origins.
func TestRedirectToAnotherOriginRefused(t *testing.T) {
	var hits atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "foreign", http.StatusTeapot)
	}))
	defer foreign.Close()
	redirect := httptest.NewServer(http.RedirectHandler(foreign.URL+"/mcp", http.StatusTemporaryRedirect))
	defer redirect.Close()
	h, _ := Bearer(canaryToken)
	want := "the server sent mcpc to another origin (" + foreign.URL + "); mcpc talks only to the origin of the configured url and sent nothing there"
	for _, transport := range []string{"http", "sse", "auto"} {
		_, err := Probe(context.Background(), Server{Name: "s", URL: redirect.URL + "/mcp", Transport: transport, Auth: "headers"}, h, patient)
		var f *Failure
		if !errors.As(err, &f) || f.Reason != want {
			t.Errorf("%s: %v, want %q", transport, err, want)
		}
		if n := hits.Load(); n != 0 {
			t.Fatalf("%s: %d requests reached the other origin", transport, n)
		}
	}
	// A redirect within the origin is followed, with the headers.
	target := remotetest.Start(t, remotetest.Options{Transport: "http", Token: canaryToken})
	mux := http.NewServeMux()
	mux.Handle("/old", http.RedirectHandler("/mcp", http.StatusTemporaryRedirect))
	mux.Handle("/mcp", target.HTTP.Config.Handler)
	same := httptest.NewServer(mux)
	defer same.Close()
	if _, err := Probe(context.Background(), Server{Name: "s", URL: same.URL + "/old", Transport: "http", Auth: "headers"}, h, patient); err != nil {
		t.Errorf("redirected within the origin: %v", err)
	}
}

func mustParseURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A server that echoes its key where a JSON-RPC answer belongs gets a
// failure reason without any piece of the key: the SDK's decoder quotes the
// first 32 bytes of what it cannot read, which cuts a long key short of
// what redaction of the whole key recognises.
func TestEchoedKeyPieces(t *testing.T) {
	key := "CANARY-long-" + strings.Repeat("Qx7w", 15)
	for _, body := range []string{
		"%s and more text",
		`{"jsonrpc":{"x":"%s"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"%s","message":"m"}}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, body, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		}))
		h, _ := Bearer(key)
		_, err := Probe(context.Background(), Server{Name: "s", URL: srv.URL, Transport: "http", Auth: "headers"}, h, patient)
		srv.Close()
		var f *Failure
		if !errors.As(err, &f) || !strings.HasPrefix(f.Reason, "protocol error: ") {
			t.Errorf("%s: %v", body, err)
			continue
		}
		for i := 0; i+redact.FragmentMin <= len(key); i++ {
			if strings.Contains(f.Reason, key[i:i+redact.FragmentMin]) {
				t.Errorf("%s: the reason shows a piece of the key: %s", body, f.Reason)
				break
			}
		}
	}
}

// deleteWatch is an HTTP transport that counts the session DELETEs that
// reach it, and holds each until the connection gives it up, as a server
// that no longer answers would.
type deleteWatch struct {
	base    http.RoundTripper
	arrived chan struct{}
	deletes atomic.Int32
}

func (d *deleteWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodDelete {
		return d.base.RoundTrip(req)
	}
	d.deletes.Add(1)
	d.arrived <- struct{}{}
	<-req.Context().Done()
	return nil, req.Context().Err()
}

// A connection that failed is abandoned: Abandon ends its requests with it
// and sends no DELETE, where Close sends one and waits (up to the go-sdk's
// 5 s) for a server that may no longer answer.
func TestAbandonSendsNoDelete(t *testing.T) {
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	for _, abandon := range []bool{true, false} {
		watch := &deleteWatch{base: http.DefaultTransport.(*http.Transport).Clone(), arrived: make(chan struct{}, 1)}
		opts := patient
		opts.Transport = watch
		c, err := Dial(context.Background(), Server{Name: "s", URL: srv.URL, Transport: TransportHTTP}, Headers{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if abandon {
			// The session's close sends its DELETE, if any, before
			// Abandon returns.
			c.Abandon()
			if n := watch.deletes.Load(); n != 0 {
				t.Errorf("Abandon sent %d DELETE(s)", n)
			}
			continue
		}
		closed := make(chan struct{})
		go func() {
			c.Close()
			close(closed)
		}()
		testservers.Recv(t, "the session's DELETE", watch.arrived)
		// Close waits for the DELETE: end it as the go-sdk's bound would.
		c.cancel()
		testservers.Recv(t, "the end of the close", closed)
	}
}
