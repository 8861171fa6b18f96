//go:build !linux

package nodeagent

import (
	"errors"
	"os"
	"syscall"
	"time"
)

type bindMount struct {
	source, target string
}

type launchSpec struct {
	argv     []string
	env      []string
	dir      string
	output   *os.File
	hostname string
	binds    []bindMount
}

type process struct {
	pid  int
	done chan struct{}
}

var errUnsupported = errors.New("the node agent runs on Linux only")

func launch(launchSpec) (*process, error) { return nil, errUnsupported }

func (p *process) signal(syscall.Signal) {}

func (p *process) stop(time.Duration) {}

func (p *process) exitCode() int32 { return -1 }

func supported() error { return errUnsupported }
