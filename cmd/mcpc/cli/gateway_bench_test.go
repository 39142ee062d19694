package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// Benchmarks of issue 32, target 4: the gateway against its peers, each
// measured in the same rounds as mcpc, the gateways taking turns; per
// round a ratio, and the median of the rounds' ratios. bench/gateway.sh
// runs them and prints the tables of docs/performance.md.

// peersDir is the directory of the peer gateways' commands
// (npm/peers/node_modules/.bin, MCPC_BENCH_PEERS), or skips.
func peersDir(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("MCPC_BENCH_PEERS")
	if dir == "" {
		dir = filepath.Join(testservers.Root(), "npm", "peers", "node_modules", ".bin")
	}
	for _, name := range []string{"mcp-proxy", "supergateway"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			if testservers.RequireNPM() {
				b.Fatalf("the peer gateway %s is not installed (npm ci --prefix npm/peers): %v", name, err)
			}
			b.Skipf("the peer gateway %s is not installed (npm ci --prefix npm/peers)", name)
		}
	}
	return dir
}

// peerGateway is one gateway process serving Streamable HTTP in front of
// the Go test server, with the sessions of its clients.
type peerGateway struct {
	name string
	pid  int
	tr   *http.Transport
	one  *mcp.ClientSession   // the client of the 1-client rounds
	many []*mcp.ClientSession // the clients of the 50-client rounds

	// Per round: CPU per call (µs) of each kind of round, p50 latency of
	// the 1-client round (µs), throughput of each (calls/s).
	cpuOne, cpuMany, p50, tputOne, tputMany []float64
}

// freePort is a loopback port free at the time of the call, for a peer
// that takes its port as a number.
func freePort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startPeer starts a peer gateway (args its command line) and waits until
// it prints ready on its standard output or error; it is stopped with the
// benchmark.
func startPeer(b *testing.B, ready string, args ...string) *exec.Cmd {
	b.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), ready) {
			go io.Copy(io.Discard, out)
			return cmd
		}
	}
	b.Fatalf("%s did not start", args[0])
	return nil
}

// waitListening waits until a connection to the loopback port succeeds.
func waitListening(b *testing.B, port int) {
	for range 500 {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Fatalf("nothing listens on port %d", port)
}

// connectPeer connects a client to endpoint.
func connectPeer(b *testing.B, client *http.Client, endpoint string) *mcp.ClientSession {
	b.Helper()
	cs, err := mcp.NewClient(benchClient, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: client}, nil)
	if err != nil {
		b.Fatalf("connect %s: %v", endpoint, err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// maxRSS is the peak resident set of pid so far (VmHWM), in MB.
func maxRSS(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// Target (issue 32): the CPU `mcpc run --http` spends per proxied call is
// at most 0.5 × what mcp-proxy and supergateway spend, each in front of
// the same stdio server (the Go test server's echo) and driven by the same
// client (the go-sdk's, over Streamable HTTP). One op is one round: each
// gateway in turn gets 200 calls from one client, one at a time, then
// 50 × 20 calls from 50 clients at once (mcpc: one chat per client, as
// an agent host's chats; mcp-proxy: one server process that all its
// sessions share, its design; supergateway --stateful: a server process
// per session). Reported, per gateway: CPU per call of the gateway
// process alone (/proc/PID/stat, utime+stime, not the servers'), the
// 1-client p50 latency, calls per second with 1 and with 50 clients, and
// the peak RSS over the run; and mcpc / peer as the median of the rounds'
// ratios.
func BenchmarkGatewayPeers(b *testing.B) {
	const oneCalls, clients, manyCalls = 200, 50, 20
	peers := peersDir(b)
	bin := buildMcpc(b)
	planFile := benchPlan(b, map[string]any{"srv": map[string]any{"Command": testServer, "Args": []string{"-tools", "echo"}}})
	// A transport per gateway, its idle connections closed before each of
	// its turns: Node's HTTP server closes a connection idle for 5 s, and
	// a POST sent on it at that moment fails (Go retries no POST).
	newTransport := func() *http.Transport {
		tr := &http.Transport{MaxIdleConnsPerHost: 2 * clients, IdleConnTimeout: 2 * time.Second}
		b.Cleanup(tr.CloseIdleConnections)
		return tr
	}

	var gws []*peerGateway
	startMcpc := func(name, bin string) {
		cmd, base := startHTTP(b, bin, "--plan", planFile, "--log-level", "None")
		b.Cleanup(func() { stopHTTP(b, cmd) })
		tr := newTransport()
		withToken := benchHTTPClient(tr)
		g := &peerGateway{name: name, pid: cmd.Process.Pid, tr: tr, one: connectPeer(b, withToken, base+"/chats/one/mcp")}
		for i := range clients {
			g.many = append(g.many, connectPeer(b, withToken, fmt.Sprintf("%s/chats/c%02d/mcp", base, i)))
		}
		gws = append(gws, g)
	}
	startMcpc("mcpc", bin)
	for _, peer := range []struct{ name, ready string }{{"mcp-proxy", "starting server on port"}, {"supergateway", "Listening on port"}} {
		port := freePort(b)
		var cmd *exec.Cmd
		if peer.name == "mcp-proxy" {
			cmd = startPeer(b, peer.ready, filepath.Join(peers, "mcp-proxy"), "--port", strconv.Itoa(port), "--host", "127.0.0.1",
				"--server", "stream", "--", testServer, "-tools", "echo")
		} else {
			cmd = startPeer(b, peer.ready, filepath.Join(peers, "supergateway"), "--stdio", testServer+" -tools echo",
				"--outputTransport", "streamableHttp", "--stateful", "--port", strconv.Itoa(port), "--logLevel", "info")
		}
		// Both print their line just before they listen.
		waitListening(b, port)
		endpoint := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		tr := newTransport()
		plain := &http.Client{Transport: tr}
		g := &peerGateway{name: peer.name, pid: cmd.Process.Pid, tr: tr, one: connectPeer(b, plain, endpoint)}
		for range clients {
			g.many = append(g.many, connectPeer(b, plain, endpoint))
		}
		gws = append(gws, g)
	}
	if old := oldMcpc(); old != "" {
		startMcpc("old", old)
	}
	// call calls echo; false (the failure reported) if that failed.
	call := func(g *peerGateway, cs *mcp.ClientSession, text string) bool {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError || testservers.TextOf(res) != text {
			b.Errorf("%s: call: %v %+v", g.name, err, res)
			return false
		}
		return true
	}
	// Start the servers and warm the paths up: Node compiles a peer's hot
	// code after some hundreds of calls, and a gateway runs for long.
	for _, g := range gws {
		for range 300 {
			call(g, g.one, "warm")
		}
		var wg sync.WaitGroup
		for _, cs := range g.many {
			wg.Go(func() {
				for range 5 {
					call(g, cs, "warm")
				}
			})
		}
		wg.Wait()
	}
	if b.Failed() {
		b.FailNow()
	}
	for b.Loop() {
		for _, g := range gws {
			g.tr.CloseIdleConnections()
			lat := make([]time.Duration, 0, oneCalls)
			cpu0, start := cpuTime(b, g.pid), time.Now()
			for range oneCalls {
				t := time.Now()
				if !call(g, g.one, "ping") {
					b.FailNow()
				}
				lat = append(lat, time.Since(t))
			}
			wall := time.Since(start)
			g.cpuOne = append(g.cpuOne, float64((cpuTime(b, g.pid)-cpu0).Microseconds())/oneCalls)
			g.tputOne = append(g.tputOne, oneCalls/wall.Seconds())
			g.p50 = append(g.p50, float64(median(lat).Nanoseconds())/1000)

			cpu0, start = cpuTime(b, g.pid), time.Now()
			var wg sync.WaitGroup
			for i, cs := range g.many {
				wg.Go(func() {
					for k := range manyCalls {
						if !call(g, cs, fmt.Sprintf("%d/%d", i, k)) {
							return
						}
					}
				})
			}
			wg.Wait()
			if b.Failed() {
				b.FailNow()
			}
			wall = time.Since(start)
			g.cpuMany = append(g.cpuMany, float64((cpuTime(b, g.pid)-cpu0).Microseconds())/(clients*manyCalls))
			g.tputMany = append(g.tputMany, clients*manyCalls/wall.Seconds())
		}
	}
	ratio := func(m, p []float64) float64 {
		r := make([]float64, len(m))
		for i := range m {
			r[i] = m[i] / p[i]
		}
		return medianOf(r)
	}
	mcpc := gws[0]
	for _, g := range gws {
		b.Logf("%s: CPU µs/call 1 client %v, 50 clients %v; p50 µs %v; calls/s %v, %v", g.name, g.cpuOne, g.cpuMany, g.p50, g.tputOne, g.tputMany)
		b.ReportMetric(medianOf(g.cpuOne), g.name+"-cpu-µs/call")
		b.ReportMetric(medianOf(g.cpuMany), g.name+"-cpu50-µs/call")
		b.ReportMetric(medianOf(g.p50), g.name+"-p50-µs")
		b.ReportMetric(medianOf(g.tputOne), g.name+"-calls/s")
		b.ReportMetric(medianOf(g.tputMany), g.name+"-calls50/s")
		b.ReportMetric(maxRSS(b, g.pid), g.name+"-maxrss-MB")
		if g == mcpc || g.name == "old" {
			continue
		}
		b.ReportMetric(ratio(mcpc.cpuOne, g.cpuOne), "mcpc/"+g.name+"-cpu")
		b.ReportMetric(ratio(mcpc.cpuMany, g.cpuMany), "mcpc/"+g.name+"-cpu50")
		b.ReportMetric(ratio(mcpc.p50, g.p50), "mcpc/"+g.name+"-p50")
		b.ReportMetric(ratio(mcpc.tputOne, g.tputOne), "mcpc/"+g.name+"-calls/s")
		b.ReportMetric(ratio(mcpc.tputMany, g.tputMany), "mcpc/"+g.name+"-calls50/s")
		b.ReportMetric(maxRSS(b, mcpc.pid)/maxRSS(b, g.pid), "mcpc/"+g.name+"-maxrss")
	}
}

// percentile is the p-th percentile (0 < p < 100) of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

// Target (issue 32): a warm call through `mcpc run --stdio` takes at most
// 1.5 × the same call made to the server directly, at p50. Both clients
// are the go-sdk's over stdio, to the Go test server's echo; one op is one
// round of 200 calls on each path, one at a time, alternating call by
// call. Reported: the median of the rounds' p50 ratios, the p10, p50 and
// p90 of every call of each path, and the CPU the mcpc process spent per
// call. With MCPC_BENCH_OLD, another mcpc takes its turn in the same
// rounds (the "old-" figures).
func BenchmarkStdioCall(b *testing.B) {
	const perRound = 200
	bin := buildMcpc(b)
	planFile := benchPlan(b, map[string]any{"srv": map[string]any{"Command": testServer, "Args": []string{"-tools", "echo"}}})
	type path struct {
		name  string
		pid   int
		cs    *mcp.ClientSession
		all   []time.Duration
		cpu   time.Duration
		ratio []float64 // per round: its p50 / the direct path's
	}
	// Both sides speak the same protocol version: with the go-sdk's
	// default, the direct client would pick the sessionless revision.
	connect := func(cmd *exec.Cmd) *path {
		cs, err := mcp.NewClient(benchClient, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return &path{name: "mcpc", pid: cmd.Process.Pid, cs: cs}
	}
	direct := connect(exec.Command(testServer, "-tools", "echo"))
	direct.name, direct.pid = "direct", 0
	paths := []*path{direct}
	for _, bin := range []string{bin, oldMcpc()} {
		if bin != "" {
			paths = append(paths, connect(exec.Command(bin, "run", "--plan", planFile, "--stdio", "--workspace", b.TempDir(),
				"--clean-env", "--env", "PATH="+os.Getenv("PATH"), "--log-level", "None")))
		}
	}
	if len(paths) == 3 {
		paths[2].name = "old"
	}
	call := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), echoPing)
		d := time.Since(start)
		if err != nil || res.IsError || testservers.TextOf(res) != "ping" {
			b.Fatalf("call: %v %+v", err, res)
		}
		return d
	}
	for range 100 { // start the chat's process, warm the paths up
		for _, p := range paths {
			call(p.cs)
		}
	}
	calls := 0
	for b.Loop() {
		round := make([][]time.Duration, len(paths))
		cpu0 := make([]time.Duration, len(paths))
		for i, p := range paths {
			if p.pid != 0 {
				cpu0[i] = cpuTime(b, p.pid)
			}
		}
		for range perRound {
			for i, p := range paths {
				round[i] = append(round[i], call(p.cs))
			}
		}
		for i, p := range paths {
			if p.pid != 0 {
				p.cpu += cpuTime(b, p.pid) - cpu0[i]
			}
			p.all = append(p.all, round[i]...)
			p.ratio = append(p.ratio, float64(median(round[i]))/float64(median(round[0])))
		}
		calls += perRound
	}
	µs := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
	for _, p := range paths {
		b.ReportMetric(µs(percentile(p.all, 10)), p.name+"-p10-µs")
		b.ReportMetric(µs(percentile(p.all, 50)), p.name+"-p50-µs")
		b.ReportMetric(µs(percentile(p.all, 90)), p.name+"-p90-µs")
		if p.pid != 0 {
			b.Logf("%s: p50 / direct per round %.2f", p.name, p.ratio)
			b.ReportMetric(medianOf(p.ratio), p.name+"/direct-p50")
			b.ReportMetric(float64(p.cpu.Microseconds())/float64(calls), p.name+"-cpu-µs/call")
		}
	}
}

// mcpc run collects garbage at GOGC 400 unless the operator set GOGC,
// and gives the process its own setting back when it ends.
func TestGatewayGC(t *testing.T) {
	gcPercent := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	before := gcPercent()
	restore := gatewayGC()
	if got := gcPercent(); got != gatewayGOGC {
		t.Errorf("GOGC during mcpc run: %d, want %d", got, gatewayGOGC)
	}
	restore()
	if got := gcPercent(); got != before {
		t.Errorf("GOGC after mcpc run: %d, want %d", got, before)
	}
	t.Setenv("GOGC", "150")
	restore = gatewayGC()
	if got := gcPercent(); got != before {
		t.Errorf("with GOGC set by the operator, mcpc run changed the collector to %d", got)
	}
	restore()
}
