// Command operator is the Flotilla operator: it turns each
// operator.karmada.io Karmada resource on its cluster into a federation
// control plane, and upgrades them when it is upgraded.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/internal/release"
	"github.com/flotilla-io/flotilla/operator/app"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
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

	logger.Info("Starting the Flotilla operator", "version", release.Version)
	if err := app.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts, logger); err != nil {
		logger.Error(err, "Operator failed")
		os.Exit(1)
	}
}
