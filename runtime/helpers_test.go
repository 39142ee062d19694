package runtime

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/sealtest"
)

// eventually waits until cond holds, with no deadline but the test
// binary's (testservers.WaitUntil).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testservers.WaitUntil(t, what, cond)
}

// leakMarkerVar and noLeaks are the tests' one leak check,
// testservers.NoLeaks.
const leakMarkerVar = testservers.LeakMarkerVar

func noLeaks(t testing.TB) string { return testservers.NoLeaks(t) }

// patientSeconds is testservers.Patient in seconds: the startup and call
// timeouts of test servers on the real clock, which no start or call that
// must succeed may reach, however busy the machine. A test of a timeout
// sets a short one on a fake clock, or against a server that never answers.
const patientSeconds = int(testservers.Patient / time.Second)

// testServer is a plan server running the Go test server with args.
func testServer(name string, args ...string) plan.Server {
	return plan.Server{
		Name: name, Command: testBin, Args: args, Cwd: "${workspace}",
		Enabled: true, Env: map[string]*string{}, Transport: "stdio",
		StartupTimeoutSeconds: patientSeconds, CallTimeoutSeconds: patientSeconds, IdleTimeoutSeconds: 1800,
		StderrLevel: "Warning",
	}
}

func testPlan(servers ...plan.Server) *plan.Plan {
	return &plan.Plan{PlanVersion: plan.Version, Profile: "volcanic", Servers: servers}
}

// testEnv is a host environment with PATH, the leak marker and vars.
func testEnv(marker string, vars ...string) HostEnv {
	return EnvFromList(append([]string{"PATH=" + os.Getenv("PATH"), leakMarkerVar + "=" + marker}, vars...), nil)
}

// newTestHost builds a host that is closed at the end of the test.
func newTestHost(t testing.TB, p *plan.Plan, opts HostOptions) *Host {
	t.Helper()
	h, err := NewHost(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// logRecorder collects a host's log entries.
type logRecorder struct {
	mu      sync.Mutex
	entries []LogEntry
}

func (l *logRecorder) log(e LogEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
}

func (l *logRecorder) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.entries {
		fmt.Fprintf(&b, "%s [%s/%s] %s\n", e.Level, e.Chat, e.Server, e.Message)
	}
	return b.String()
}

// lines reads a file of lines (a start or call log); a missing file has none.
func lines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func ptr(s string) *string { return &s }

const (
	remoteSecret = "host-secret-for-runtime-tests"
	remoteCanary = "CANARY-remote-5e6f7a"
)

// patientDial and addRemote are package sealtest's, with this package's
// host secret.
var patientDial = sealtest.PatientDial

func addRemote(t testing.TB, ws, scope string, s remote.Server, h remote.Headers) {
	t.Helper()
	sealtest.Add(t, ws, remoteSecret, scope, s, h)
}
