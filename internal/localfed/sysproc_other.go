//go:build unix && !linux

package localfed

import "syscall"

// childSysProcAttr puts the child in its own process group, so that Close can
// signal everything it may have spawned. Without Linux's Pdeathsig, children
// outlive a parent that dies without Close.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
