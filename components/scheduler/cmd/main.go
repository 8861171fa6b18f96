// Command scheduler is Flotilla's binding scheduler: it places
// ResourceBindings and ClusterResourceBindings whose spec.schedulerName is
// its own onto member clusters.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/components/scheduler/app"
	"github.com/flotilla-io/flotilla/internal/memlimit"
	"github.com/flotilla-io/flotilla/internal/release"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
	memoryLimitRatio := memlimit.BindFlag(flag.CommandLine)
	version := flag.Bool("version", false, "Print the release and exit.")
	// klog's text logger and its -v / -vmodule flags, like other Kubernetes
	// components.
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(flag.CommandLine)
	flag.Parse()
	if *version {
		fmt.Println(release.Version)
		return
	}
	logger := textlogger.NewLogger(logConfig)
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)

	if err := memlimit.Apply(*memoryLimitRatio, logger); err != nil {
		logger.Error(err, "Invalid flag")
		os.Exit(2)
	}

	if err := app.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts, logger); err != nil {
		logger.Error(err, "Scheduler failed")
		os.Exit(1)
	}
}
