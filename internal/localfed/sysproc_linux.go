package localfed

import "syscall"

// childSysProcAttr puts the child in its own process group, so that Close can
// signal everything it may have spawned, and kills it if this process dies
// without Close (a failed test, go test's timeout, SIGKILL).
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
