// Command scheduler-estimator is Flotilla's scheduler estimator: run once
// per member cluster with the member's kubeconfig, it answers the
// scheduler's "how many of these replicas fit here" over Karmada's
// estimator gRPC API, from an informer cache of the member's nodes and pods.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/flotilla-io/flotilla/components/scheduler-estimator/app"
	"github.com/flotilla-io/flotilla/internal/memlimit"
	"github.com/flotilla-io/flotilla/internal/release"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
	// --kubeconfig is controller-runtime's flag, registered on the command
	// line when it is imported; --master overrides the server it names, as
	// in Karmada's estimator.
	master := flag.String("master", "", "Address of the member's API server; overrides the one in --kubeconfig.")
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
	if err := opts.Validate(); err != nil {
		logger.Error(err, "Invalid flag")
		os.Exit(2)
	}
	cfg, err := memberConfig(*master)
	if err != nil {
		logger.Error(err, "Member kubeconfig")
		os.Exit(2)
	}
	if err := app.Run(ctrl.SetupSignalHandler(), cfg, opts, logger); err != nil {
		logger.Error(err, "Scheduler estimator failed")
		os.Exit(1)
	}
}

func memberConfig(master string) (*rest.Config, error) {
	if master == "" {
		return ctrl.GetConfig()
	}
	kubeconfig := ""
	if f := flag.Lookup(ctrlconfig.KubeconfigFlagName); f != nil {
		kubeconfig = f.Value.String()
	}
	return clientcmd.BuildConfigFromFlags(master, kubeconfig)
}
