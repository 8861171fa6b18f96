// Package componentmain is what the main function of every Flotilla binary
// shares: --version, klog's text logger with its -v / -vmodule flags (as
// other Kubernetes components log), the Go memory soft limit taken from the
// container's, and the exit codes.
package componentmain

import (
	"flag"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/internal/memlimit"
	"github.com/flotilla-io/flotilla/internal/release"
)

// Exit codes: a bad command line, or a component that failed while running.
const (
	ExitInvalidFlag = 2
	ExitFailed      = 1
)

// Options choose the shared flags a binary has.
type Options struct {
	// MemoryLimit adds --memory-limit-ratio (internal/memlimit); the
	// operator, which holds no caches of a federation's size, goes without.
	MemoryLimit bool
}

// Setup registers the shared flags on flag.CommandLine beside those the
// component bound already, parses the command line, prints the release and
// exits for --version, and returns the logger, installed as
// controller-runtime's and klog's (client-go logs through klog).
func Setup(opts Options) logr.Logger {
	var ratio *float64
	if opts.MemoryLimit {
		ratio = memlimit.BindFlag(flag.CommandLine)
	}
	version := flag.Bool("version", false, "Print the release and exit.")
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(flag.CommandLine)
	flag.Parse()
	if *version {
		fmt.Println(release.Version)
		os.Exit(0)
	}
	logger := textlogger.NewLogger(logConfig)
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	if ratio != nil {
		if err := memlimit.Apply(*ratio, logger); err != nil {
			InvalidFlag(logger, err)
		}
	}
	return logger
}

// InvalidFlag logs err and exits with ExitInvalidFlag.
func InvalidFlag(logger logr.Logger, err error) {
	logger.Error(err, "Invalid flag")
	os.Exit(ExitInvalidFlag)
}

// Failed logs that the component named what failed with err and exits with
// ExitFailed.
func Failed(logger logr.Logger, what string, err error) {
	logger.Error(err, what+" failed")
	os.Exit(ExitFailed)
}
