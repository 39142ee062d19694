// Package testservers gives tests the real MCP servers they start: the Go
// test server of fixtures/servers/testserver, built once per test binary,
// and the npm server @modelcontextprotocol/server-everything installed by
// `npm ci` (package.json at the repository root); and the tests' one leak
// check (NoLeaks: no process or goroutine of a test outlives it).
package testservers

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testmain"
)

// Root is the repository root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// build is one command built for the tests of this process.
type build struct {
	once    sync.Once
	bin     string
	private bool // built into a directory of this process, which Cleanup removes
	err     error
}

var (
	buildsMu sync.Mutex
	builds   = map[string]*build{} // by package directory
)

// buildOnce builds the command in the package directory pkg (relative to
// the repository root), once per process, and returns the path of the
// binary. It builds into the directory that every test binary of this tree
// shares (sharedBuildDir), where `go build` finds the binary of the last
// run up to date and does not link it again: a link of mcpc is costly,
// and `go test ./...` runs several test binaries that need one command or
// more (docs/performance.md, "The test suite"). Where there is no such directory it builds into one of
// its own, which Cleanup removes.
//
// Within one `go test` run it checks each command once, not once per test
// binary: the first test binary of the run that needs the command runs go
// build and records the run (goTestRun) beside the binary; the others of
// the same run find the record and take the binary as it is. A go build
// that finds the binary up to date still costs CPU, and a run of the suite
// would make one per test binary and command.
func buildOnce(pkg, name string) (string, error) {
	buildsMu.Lock()
	b := builds[pkg]
	if b == nil {
		b = &build{}
		builds[pkg] = b
	}
	buildsMu.Unlock()
	b.once.Do(func() {
		dir, unlock, err := sharedBuildDir()
		if err != nil {
			if dir, err = os.MkdirTemp("", name+"-"); err != nil {
				b.err = err
				return
			}
			b.private, unlock = true, func() {}
		}
		defer unlock()
		bin := filepath.Join(dir, name)
		run := ""
		if !b.private {
			run = goTestRun()
		}
		if checkedIn(bin, run) {
			b.bin = bin
			return
		}
		os.Remove(bin + checkedSuffix)
		// -trimpath: compiled code that does not depend on the
		// directory, which TestBuildInAClone's build of a copy of the tree
		// then reuses from the build cache.
		cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./"+pkg)
		cmd.Dir = Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			if b.private {
				os.RemoveAll(dir)
			}
			b.err = fmt.Errorf("building %s: %v\n%s", pkg, err, out)
			return
		}
		if run != "" {
			// Without the record the next test binary runs go build
			// again: a cost, not an error.
			_ = os.WriteFile(bin+checkedSuffix, []byte(run), 0o600)
		}
		b.bin = bin
	})
	return b.bin, b.err
}

// checkedSuffix names the file beside a built command that records the
// `go test` run whose go build made it or found it up to date.
const checkedSuffix = ".checked-by-run"

// checkedIn reports whether bin exists and a go build of the run named run
// (goTestRun; "" is no run) made it or found it up to date.
func checkedIn(bin, run string) bool {
	if run == "" {
		return false
	}
	got, err := os.ReadFile(bin + checkedSuffix)
	if err != nil || string(got) != run {
		return false
	}
	fi, err := os.Stat(bin)
	return err == nil && fi.Mode().IsRegular()
}

// Build builds the Go test server (once per process) and returns the path
// of the binary. Call Cleanup from TestMain to remove it.
func Build() (string, error) {
	return buildOnce("fixtures/servers/testserver", "mcpc-testserver")
}

// Mcpc builds the mcpc command (once per process: every test that runs
// mcpc as a process shares the binary) and returns its path. Cleanup, which
// Main calls, removes it.
func Mcpc(t testing.TB) string {
	t.Helper()
	bin, err := buildOnce("cmd/mcpc", "mcpc")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Cleanup removes what Build and Mcpc made in directories of this process
// (the shared directory stays, for the next test binary).
func Cleanup() {
	buildsMu.Lock()
	defer buildsMu.Unlock()
	for _, b := range builds {
		if b.bin != "" && b.private {
			os.RemoveAll(filepath.Dir(b.bin))
		}
	}
}

// Main is the TestMain of a package whose tests run the test server: it
// builds the server, gives its path to use, runs the tests, removes the
// build, prints the Summary of what was skipped (testmain.Skip) and exits
// with the tests' code.
func Main(m *testing.M, use func(bin string)) {
	testmain.Prepare()
	bin, err := Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	use(bin)
	code := m.Run()
	Cleanup()
	testmain.Summary(os.Stdout)
	os.Exit(code)
}

// EverythingVersion is the pinned version of package.json.
const EverythingVersion = "2026.8.31"

// Everything returns the command that starts the real
// @modelcontextprotocol/server-everything over stdio. ok is false when it is
// not installed (run `npm ci`); with MCPC_REQUIRE_NPM=1 (as in CI) callers
// must then fail instead of skipping.
func Everything() (command string, args []string, ok bool) {
	bin := filepath.Join(Root(), "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		return "", nil, false
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", nil, false
	}
	return bin, []string{"stdio"}, true
}

// FilesystemVersion is the pinned version of
// @modelcontextprotocol/server-filesystem in package.json.
const FilesystemVersion = "2026.8.31"

// NeedFilesystem returns the command that starts the real
// @modelcontextprotocol/server-filesystem over stdio, serving dir, or ends
// the test as NeedEverything does.
func NeedFilesystem(t testing.TB, dir string) (command string, args []string) {
	t.Helper()
	bin := filepath.Join(Root(), "node_modules", ".bin", "mcp-server-filesystem")
	_, statErr := os.Stat(bin)
	_, nodeErr := exec.LookPath("node")
	if statErr != nil || nodeErr != nil {
		if RequireNPM() {
			t.Fatal("server-filesystem is not installed (npm ci) and MCPC_REQUIRE_NPM=1")
		}
		testmain.Skip(t, "server-filesystem is not installed: run npm ci")
	}
	return bin, []string{dir}
}

// RequireNPM reports whether the npm servers must be present.
func RequireNPM() bool { return os.Getenv("MCPC_REQUIRE_NPM") == "1" }

// RequireBrowser reports whether the headless Chromium the browser tests
// drive (HeadlessChromium) must be present: MCPC_REQUIRE_BROWSER=1, as in CI.
func RequireBrowser() bool { return os.Getenv("MCPC_REQUIRE_BROWSER") == "1" }

// NeedEverything returns the command of server-everything, as Everything
// does, or ends the test: skipped when it is not installed, failed when
// MCPC_REQUIRE_NPM=1 says it must be.
func NeedEverything(t testing.TB) (command string, args []string) {
	t.Helper()
	command, args, ok := Everything()
	if !ok {
		if RequireNPM() {
			t.Fatal("server-everything is not installed (npm ci) and MCPC_REQUIRE_NPM=1")
		}
		testmain.Skip(t, "server-everything is not installed: run npm ci")
	}
	return command, args
}

// ReadPid reads a pid file a test server wrote (-pidfile, -child-pidfile).
func ReadPid(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// Alive reports whether pid is a running process (a zombie is not).
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f, ok := statFields(b)
	return !ok || f[0] != "Z" // field 3, the state
}

// MarkedProcesses lists the live processes, other than the calling one,
// whose environment holds the entry marker ("NAME=VALUE"): a test puts
// such an entry in the environment of what it starts, which every child
// inherits, and finds leftovers whatever their parent or process group.
func MarkedProcesses(marker string) []int {
	needle := []byte(marker + "\x00")
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, needle) || !Alive(pid) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// Conformance builds fixtures/servers/conformance (the server that offers
// every scenario of the MCP conformance suite) once and returns its path.
func Conformance(t testing.TB) string {
	t.Helper()
	bin, err := buildOnce("fixtures/servers/conformance", "mcpc-conformance")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// HeadlessChromium is Debian's build of Chromium's headless shell (apt-get
// install chromium-headless-shell; .ci/run installs it), the browser the
// browser tests drive. It is the browser Playwright itself launches for a
// headless chromium (`npx playwright install chromium`, the host's
// deployment step, installs it next to the full browser), and it costs
// less CPU than the full chromium in its headless mode (docs/performance.md,
// "The test suite").
// The Debian wrapper /usr/bin/chromium-headless-shell runs it as a child
// of a shell, which a test that kills the browser would kill instead.
const HeadlessChromium = "/usr/lib/chromium/chromium-headless-shell"

// statFields are the fields of a /proc/PID/stat line from field 3 (the
// state) on. Field 2, the command name in parentheses, may hold spaces and
// parentheses itself: the fields after it are counted from its last ')'.
func statFields(stat []byte) ([]string, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, false
	}
	f := strings.Fields(string(stat[i+1:]))
	return f, len(f) > 0
}

// startTime is field 22 of a /proc/PID/stat line.
func startTime(stat []byte) (string, bool) {
	f, _ := statFields(stat)
	if len(f) < 20 {
		return "", false
	}
	return f[19], true
}
