// Command descheduler takes replicas of dynamically weighted Deployments off
// member clusters that cannot schedule them, so the scheduler places them
// elsewhere.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/components/descheduler/app"
	"github.com/flotilla-io/flotilla/internal/memlimit"
	"github.com/flotilla-io/flotilla/internal/release"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
	memoryLimitRatio := memlimit.BindFlag(flag.CommandLine)
	version := flag.Bool("version", false, "Print the release and exit.")
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
		logger.Error(err, "Descheduler failed")
		os.Exit(1)
	}
}
