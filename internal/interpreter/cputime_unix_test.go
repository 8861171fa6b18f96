//go:build unix

package interpreter_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used. Benchmarks report it per
// operation besides wall time: on a shared machine wall time also counts
// the time other processes held the CPU.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
