// Command rusage runs a command and prints, on one line to its own stdout,
// the CPU seconds (user + system) and the maximum resident set size (kB)
// the kernel reports for it (wait4's rusage, what /usr/bin/time prints),
// to the microsecond: /usr/bin/time prints hundredths of a second, too
// coarse for a run of a few milliseconds. The command's stdout and stderr
// are discarded; stderr is kept in FILE with -e FILE. The exit status is
// the command's.
//
// usage: rusage [-e FILE] CMD [ARG...]
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	args := os.Args[1:]
	var stderr *os.File
	if len(args) >= 2 && args[0] == "-e" {
		f, err := os.Create(args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		stderr, args = f, args[2:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: rusage [-e FILE] CMD [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(args[0], args[1:]...)
	if stderr != nil {
		cmd.Stderr = stderr
	}
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	fmt.Printf("%.6f %d\n", cpu, ru.Maxrss)
	os.Exit(cmd.ProcessState.ExitCode())
}
