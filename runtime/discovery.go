package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime/supervisor"
)

// Discovery (SPEC §4): start each server once in a throw-away workspace,
// list its tools, stop it. The caller shares the result across chats.

const (
	// DefaultStartupTimeout applies when LaunchSpec.StartupTimeout is not positive.
	DefaultStartupTimeout = 60 * time.Second
	// DefaultDiscoveryConcurrency is how many servers Discover starts at
	// once when DiscoverOptions.Concurrency is not positive.
	DefaultDiscoveryConcurrency = 32

	// stderrTailBytes bounds the stderr kept per server.
	stderrTailBytes = 16 << 10
	// reasonLines and reasonLineWidth bound the stderr quoted in a reason.
	reasonLines     = 3
	reasonLineWidth = 300
)

// LaunchSpec is one server process, fully resolved: no templates left.
type LaunchSpec struct {
	Server  string
	Command string // looked up in mcpc's own PATH when it has no slash
	Args    []string
	// Dir is the working directory; "" means the workspace.
	Dir string
	// Env is the complete environment of the process (SPEC §2.4). nil means
	// an empty environment, never mcpc's own (which holds host secrets).
	Env []string
	// StartupTimeout bounds start + initialize + tools/list; 0 means
	// DefaultStartupTimeout.
	StartupTimeout time.Duration
}

// Target is one server to discover. Spec resolves the server's launch
// templates for the given workspace directory.
type Target struct {
	Server string
	Spec   func(workspace string) (LaunchSpec, error)
	// discover is the host's memory of the server's answer to
	// server/discover (nil: none).
	discover *discoverMemo
}

// Phase of one server's discovery, reported through DiscoverOptions.Progress.
type Phase string

const (
	PhaseStarted Phase = "started"
	PhaseDone    Phase = "done"
	PhaseFailed  Phase = "failed"
)

// ProgressEvent reports one server's discovery starting or ending.
type ProgressEvent struct {
	Server  string
	Phase   Phase
	Elapsed time.Duration // since this server's discovery started; 0 for PhaseStarted
	Tools   int           // PhaseDone: number of tools listed
	Reason  string        // PhaseFailed: the redacted reason
}

// DiscoverOptions tunes Discover. The zero value is ready to use.
type DiscoverOptions struct {
	// Concurrency bounds how many servers run at once; 0 means
	// DefaultDiscoveryConcurrency.
	Concurrency int
	// Progress, if set, is called when a server's discovery starts and ends.
	// Calls never overlap (they are serialized), but come from several
	// goroutines.
	Progress func(ProgressEvent)
	// Redact, if set, is applied to every text that may quote the server or
	// its environment: Reason, Stderr and the error message.
	Redact func(string) string
	// Clock measures the startup timeouts; nil means RealClock.
	Clock Clock
	// OnEscaped, if set, is told of each process a server started that had
	// left the server's process group (setsid) and was killed on its own
	// when the server stopped (killed false: it would not die).
	OnEscaped func(server string, pid int, command string, killed bool)
	// Reap, if set, takes over the end of each discovery that listed its
	// tools: Discover hands it a function that stops the process (stdin
	// closed, stopGrace to exit, then its process group killed), reaps it
	// and removes its workspace, and does not wait for it. Reap must see to
	// it that the function runs to its end, say on a goroutine the caller
	// waits for before it exits. nil: Discover runs these stops on
	// goroutines of its own and waits for them before it returns.
	//
	// Either way, a discovery's result, and its place among the
	// Concurrency servers running at once, are released as soon as
	// tools/list answers: the stop no longer delays them (issue 13).
	Reap func(stop func())
}

// Discovery is the result for one Target.
type Discovery struct {
	Server string
	// Tools in tools/list order, all pages; nil when discovery failed.
	Tools []*mcp.Tool
	// FirstPage counts the tools of Tools that tools/list's first page
	// held (a CraftBot host registers only those).
	FirstPage     int
	ServerName    string // from the initialize result
	ServerVersion string
	// Capabilities and Instructions are the server's, from its initialize
	// result: the gateway offers a server's resources and prompts only if it
	// declared them, and passes its instructions on (passthrough.go).
	Capabilities *mcp.ServerCapabilities
	Instructions string
	// Err is nil on success, else a *DiscoveryError whose message is Reason.
	Err error
	// Reason says why discovery failed, for a human: "exited (3): <last
	// stderr lines>", "no answer within 60s", "protocol error: …". Redacted.
	Reason string
	// Stderr is the tail of the server's stderr (at most 16 KiB), redacted.
	Stderr  string
	Elapsed time.Duration
}

// FailureKind classifies a failed discovery.
type FailureKind string

const (
	FailSpec      FailureKind = "spec"      // Target.Spec failed or gave no command
	FailStart     FailureKind = "start"     // the process could not be started
	FailExited    FailureKind = "exited"    // the process exited before listing its tools
	FailTimeout   FailureKind = "timeout"   // no answer within the startup timeout
	FailProtocol  FailureKind = "protocol"  // the server answered, but not valid MCP
	FailCancelled FailureKind = "cancelled" // the context passed to Discover ended
)

// DiscoveryError is the error of a failed Discovery. Its message is the
// redacted Reason; it never wraps errors whose text could hold secrets.
type DiscoveryError struct {
	Kind     FailureKind
	Reason   string
	ExitCode int // the exit code with FailExited when the process exited normally, else -1
}

func (e *DiscoveryError) Error() string { return e.Reason }

// Discover starts every target's server in a fresh temporary workspace,
// lists its tools and stops it again, running up to Concurrency servers at
// once. It returns one Discovery per target, in the order of targets. A
// server that fails is reported in its Discovery; the others carry on.
//
// When Discover returns, every process it started has been killed and
// reaped, with every descendant that stayed in the server's process group,
// and every temporary workspace is removed; unless opts.Reap is set, which
// then stops the processes that listed their tools.
func Discover(ctx context.Context, targets []Target, opts DiscoverOptions) []Discovery {
	n := opts.Concurrency
	if n <= 0 {
		n = DefaultDiscoveryConcurrency
	}
	clock := opts.Clock
	if clock == nil {
		clock = RealClock{}
	}
	redact := opts.Redact
	if redact == nil {
		redact = func(s string) string { return s }
	}
	var progressMu sync.Mutex
	progress := func(e ProgressEvent) {
		if opts.Progress != nil {
			progressMu.Lock()
			defer progressMu.Unlock()
			opts.Progress(e)
		}
	}

	reap := opts.Reap
	if reap == nil {
		var stops sync.WaitGroup
		defer stops.Wait()
		reap = func(stop func()) { stops.Go(stop) }
	}

	// n workers take the targets in order, so they also start in order.
	out := make([]Discovery, len(targets))
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range targets {
			next <- i
		}
	}()
	var wg sync.WaitGroup
	for range min(n, len(targets)) {
		wg.Go(func() {
			for i := range next {
				out[i] = discoverOne(ctx, targets[i], redact, progress, clock, opts.OnEscaped, reap)
			}
		})
	}
	wg.Wait()
	return out
}

// fail records a failure.
func (d *Discovery) fail(redact func(string) string, kind FailureKind, reason string, code int) {
	d.Tools = nil
	d.Reason = redact(reason)
	d.Err = &DiscoveryError{Kind: kind, Reason: d.Reason, ExitCode: code}
}

// discoverOne runs one target. A process that listed its tools is stopped
// through reap, which also removes the workspace then.
func discoverOne(ctx context.Context, t Target, redact func(string) string, progress func(ProgressEvent), clock Clock,
	onEscaped func(server string, pid int, command string, killed bool), reap func(stop func())) (d Discovery) {
	d.Server = t.Server
	start := time.Now()
	progress(ProgressEvent{Server: t.Server, Phase: PhaseStarted})
	defer func() {
		d.Elapsed = time.Since(start)
		ev := ProgressEvent{Server: t.Server, Phase: PhaseDone, Elapsed: d.Elapsed, Tools: len(d.Tools)}
		if d.Err != nil {
			ev.Phase, ev.Tools, ev.Reason = PhaseFailed, 0, d.Reason
		}
		progress(ev)
	}()

	if err := ctx.Err(); err != nil {
		d.fail(redact, FailCancelled, "cancelled before it started", -1)
		return d
	}
	ws, err := os.MkdirTemp("", "mcpc-discovery-")
	if err != nil {
		d.fail(redact, FailStart, "cannot create a temporary workspace: "+err.Error(), -1)
		return d
	}
	// Removed once the processes are gone: here, or by the stop handed to
	// reap.
	keepWS := false
	defer func() {
		if !keepWS {
			os.RemoveAll(ws)
		}
	}()

	if t.Spec == nil {
		d.fail(redact, FailSpec, "invalid launch spec: no Spec function", -1)
		return d
	}
	spec, err := t.Spec(ws)
	if cs := (*CannotStartError)(nil); errors.As(err, &cs) {
		d.fail(redact, FailSpec, cs.Reason, -1)
		return d
	}
	if err != nil {
		d.fail(redact, FailSpec, "invalid launch spec: "+err.Error(), -1)
		return d
	}
	if spec.Command == "" {
		d.fail(redact, FailSpec, "invalid launch spec: empty command", -1)
		return d
	}
	cfg := procConfig{version: "discovery", discover: t.discover}
	if onEscaped != nil {
		cfg.onEscaped = func(e supervisor.ProcInfo, killed bool) { onEscaped(t.Server, e.Pid, e.Comm, killed) }
	}
	p := probe(ctx, spec, ws, clock, redact, cfg)
	if p.stop != nil {
		keepWS = true
		stop := p.stop
		reap(func() {
			stop()
			os.RemoveAll(ws)
		})
	}
	d.Stderr = redact(p.stderr)
	if p.kind != "" {
		reason := p.reason
		lines := lastLines(d.Stderr, reasonLines, reasonLineWidth)
		if len(lines) > 0 {
			if p.kind == FailExited {
				reason += ": " + strings.Join(lines, " | ")
			} else {
				reason += "; stderr: " + strings.Join(lines, " | ")
			}
		}
		d.fail(redact, p.kind, reason, p.code)
		return d
	}
	d.Tools, d.FirstPage, d.ServerName, d.ServerVersion = p.tools, p.firstPage, p.name, p.version
	d.Capabilities, d.Instructions = p.caps, p.instructions
	return d
}

// probeResult is what one server process told us.
type probeResult struct {
	tools         []*mcp.Tool
	firstPage     int
	name, version string
	caps          *mcp.ServerCapabilities
	instructions  string
	stderr        string      // unredacted tail
	kind          FailureKind // "" on success
	reason        string      // headline, without stderr
	code          int
	// stop, set on success, stops the process, which still runs: the
	// caller must call it.
	stop func()
}

// probe starts the server and lists its tools within the startup timeout.
// When that succeeds, it returns at once with the process still running
// and r.stop to stop it (its stderr tail is what it wrote until then);
// otherwise it stops the process, process group included, and returns
// once it is reaped and its stderr drained, for the exit status and the
// whole stderr.
func probe(ctx context.Context, spec LaunchSpec, workspace string, clock Clock, redact func(string) string, cfg procConfig) (r probeResult) {
	r.code = -1
	timeout := startupTimeout(spec)
	sctx, cancel, timedOut := startTimeout(ctx, clock, timeout)
	defer cancel()
	p, err := startProc(sctx, spec, workspace, cfg)
	if p == nil {
		r.kind, r.reason = FailStart, err.Error()
		return r
	}
	if err == nil {
		r.name, r.version = p.serverInfo()
		if init := p.cs.InitializeResult(); init != nil {
			r.caps, r.instructions = init.Capabilities, init.Instructions
		}
		// The whole discovery is bounded: kill at once if the timeout
		// passes while the server lists its tools.
		stopKill := context.AfterFunc(sctx, p.sp.KillGroup)
		r.tools, r.firstPage, err = ListToolPages(sctx, p.cs)
		stopKill()
	}
	if err == nil {
		r.stderr, r.stop = p.stderrTail(), p.stop
		return r
	}
	p.stop()
	r.stderr = p.stderrTail()
	r.tools = nil
	r.kind, r.reason, r.code = p.startFailure(err, ctx, timedOut(), timeout, redact)
	return r
}

// ListServerTools follows tools/list pagination to the end.
func ListServerTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	tools, _, err := ListToolPages(ctx, cs)
	return tools, err
}

// ListToolPages follows tools/list pagination to the end, and says how
// many of the tools the first page holds (a CraftBot host reads only that
// one).
func ListToolPages(ctx context.Context, cs *mcp.ClientSession) (tools []*mcp.Tool, firstPage int, err error) {
	seen := map[string]bool{}
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, 0, fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, res.Tools...)
		if page == 0 {
			firstPage = len(tools)
		}
		if res.NextCursor == "" {
			return tools, firstPage, nil
		}
		if seen[res.NextCursor] {
			return nil, 0, fmt.Errorf("tools/list: the server returned cursor %q twice", res.NextCursor)
		}
		seen[res.NextCursor] = true
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// formatSeconds renders a timeout as the host does: "60s", or "1.5s".
func formatSeconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return d.String()
}

// reap stops a discovery's process in the background (DiscoverOptions.Reap),
// so that the discovery's result is published without waiting for the
// process to exit; Close waits for it. Once the host is closed, it stops
// the process at once.
func (h *Host) reap(stop func()) {
	if !h.track(stop) {
		stop()
	}
}
