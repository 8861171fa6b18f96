// Command agent runs in a Pull member cluster: it registers the member with
// the control plane, keeps its lease and status, and applies the Works of
// its execution namespace to the member. Flags are karmada-agent's.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/components/agent/app"
	"github.com/flotilla-io/flotilla/internal/memlimit"
	"github.com/flotilla-io/flotilla/internal/release"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
	memoryLimitRatio := memlimit.BindFlag(flag.CommandLine)
	version := flag.Bool("version", false, "Print the release and exit.")
	// klog's text format and -v / -vmodule, like other Kubernetes components.
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(flag.CommandLine)
	flag.Parse()
	if *version {
		fmt.Println(release.Version)
		return
	}
	logger := textlogger.NewLogger(logConfig)
	ctrl.SetLogger(logger)
	klog.SetLogger(logger) // client-go logs through klog

	if err := memlimit.Apply(*memoryLimitRatio, logger); err != nil {
		logger.Error(err, "Invalid flag")
		os.Exit(2)
	}
	// The member: --kubeconfig, else the in-cluster configuration.
	if err := app.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts, logger); err != nil {
		logger.WithName("setup").Error(err, "agent failed")
		os.Exit(1)
	}
}
