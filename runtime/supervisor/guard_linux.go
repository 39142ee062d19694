//go:build linux

package supervisor

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// StartGuard makes this process a child subreaper and starts the watchdog:
// exe with args, which must call RunGuard on its standard input (mcpc's
// hidden guard mode). log receives what the guard finds. Call it before
// any server starts, and Close once every server stopped.
func StartGuard(exe string, args []string, log func(string)) (*Guard, error) {
	if activeGuard.Load() != nil {
		return nil, fmt.Errorf("a guard runs already")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("cannot become a child subreaper: %w", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin = pr
	cmd.Env = []string{} // it needs nothing, and must not hold mcpc's secrets
	// Its own group, no parent-death signal: it must outlive mcpc, and a
	// signal to mcpc's group must not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := startChild(cmd); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("cannot start the guard process: %w", err)
	}
	pr.Close()
	g := &Guard{cmd: cmd, log: log, w: pw, groups: map[int]bool{}, claimed: map[int]int{}, orphans: map[int]ProcInfo{},
		stop: make(chan struct{}), done: make(chan struct{})}
	activeGuard.Store(g)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	go func() {
		defer close(g.done)
		defer signal.Stop(sig)
		for {
			select {
			case <-sig:
				g.sweep()
			case <-g.stop:
				return
			}
		}
	}()
	return g, nil
}

// sweep reaps the orphans that ended and records the live ones that are
// outside every server group (the others die with their group). It runs
// when a child ended (SIGCHLD): an orphan is reparented when its parent
// dies, which mcpc hears of only if that parent was its child.
func (g *Guard) sweep() {
	children.starting.Lock()
	defer children.starting.Unlock()
	// The list is read under g.mu: a claim released meanwhile (its process
	// killed) must not meet a list from before the kill.
	g.mu.Lock()
	defer g.mu.Unlock()
	procs, _ := listProcs()
	self := os.Getpid()
	live := map[int]bool{}
	for _, p := range procs {
		if p.PPid != self || isOwnChild(p.Pid) {
			continue
		}
		if p.Zombie {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(p.Pid, &ws, unix.WNOHANG, nil)
			continue
		}
		live[p.Pid] = true
		if _, known := g.orphans[p.Pid]; known || g.groups[p.Pgid] || g.claimed[p.Pid] > 0 {
			continue
		}
		g.orphans[p.Pid] = p
		g.found++
		g.sendLocked('p', p.Pid)
		g.log(fmt.Sprintf("process %d (%s) outlived the server that started it, outside its process group (setsid); it is killed when mcpc stops", p.Pid, p.Comm))
	}
	for pid := range g.orphans {
		if !live[pid] {
			delete(g.orphans, pid)
			g.sendLocked('q', pid)
		}
	}
}

// Close kills the orphans left (call it once the servers stopped: every
// server has stopped, so every process left is one), reaps them, lets the
// watchdog go and waits for it. It reports what it found.
func (g *Guard) Close() GuardReport {
	close(g.stop)
	<-g.done
	g.sweep()
	g.mu.Lock()
	var orphans []ProcInfo
	for _, p := range g.orphans {
		orphans = append(orphans, p)
	}
	g.mu.Unlock()
	left := killProcesses(orphans, groupGoneLimit)
	g.sweep() // reaps them
	report := GuardReport{Orphans: g.found}
	for _, p := range left {
		report.Survivors = append(report.Survivors, p.Pid)
	}
	sort.Ints(report.Survivors)
	g.mu.Lock()
	if g.w != nil {
		g.w.Close() // the watchdog reads EOF, finds nothing left to kill, and exits
		g.w = nil
	}
	g.mu.Unlock()
	exited := make(chan struct{})
	go func() {
		_ = g.cmd.Wait()
		unregisterChild(g.cmd)
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(groupGoneLimit):
		_ = g.cmd.Process.Kill()
		<-exited
	}
	activeGuard.CompareAndSwap(g, nil)
	return report
}

// RunGuard is the watchdog (mcpc's hidden guard mode): it reads mcpc's
// lines from r until the pipe closes, then kills every server process
// group and orphan mcpc had not seen end, and returns how many it killed.
func RunGuard(r io.Reader) int {
	groups, pids := map[int]bool{}, map[int]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		c, ok := parseGuardLine(sc.Text())
		if !ok {
			continue
		}
		switch c.op {
		case 'g':
			groups[c.id] = true
		case 'u':
			delete(groups, c.id)
		case 'p':
			pids[c.id] = true
		case 'q':
			delete(pids, c.id)
		}
	}
	killed := 0
	for pgid := range groups {
		if syscall.Kill(-pgid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	for pid := range pids {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	return killed
}
