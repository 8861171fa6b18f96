// Command controller-manager runs Flotilla's controllers against the
// control plane's API server.
package main

import (
	"errors"
	"flag"
	"os"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/components/controller-manager/app"
	"github.com/flotilla-io/flotilla/internal/memlimit"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
	memoryLimitRatio := flag.Float64("memory-limit-ratio", memlimit.DefaultRatio,
		"Fraction of the container's memory limit (cgroup) given to Go as its soft memory limit, so that the garbage collector works harder near the limit instead of the process being killed; 0 disables it, and GOMEMLIMIT overrides it.")
	// klog's text format and -v / -vmodule, like other Kubernetes components.
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(flag.CommandLine)
	flag.Parse()
	logger := textlogger.NewLogger(logConfig)
	ctrl.SetLogger(logger)
	klog.SetLogger(logger) // client-go logs through klog

	switch limit, err := memlimit.Set(*memoryLimitRatio); {
	case errors.Is(err, memlimit.ErrInvalidRatio):
		logger.Error(err, "Invalid --memory-limit-ratio")
		os.Exit(2)
	case err != nil:
		logger.Error(err, "Running without a soft memory limit")
	case limit > 0:
		logger.Info("Set Go's soft memory limit from the container's memory limit", "bytes", limit)
	}

	if err := app.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts, logger); err != nil {
		logger.WithName("setup").Error(err, "controller-manager failed")
		os.Exit(1)
	}
}
