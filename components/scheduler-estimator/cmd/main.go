// Command scheduler-estimator is Flotilla's scheduler estimator: run once
// per member cluster with the member's kubeconfig, it answers the
// scheduler's "how many of these replicas fit here" over Karmada's
// estimator gRPC API, from an informer cache of the member's nodes and pods.
package main

import (
	"flag"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/flotilla-io/flotilla/components/scheduler-estimator/app"
	"github.com/flotilla-io/flotilla/internal/componentmain"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
	// --kubeconfig is controller-runtime's flag, registered on the command
	// line when it is imported; --master overrides the server it names, as
	// in Karmada's estimator.
	master := flag.String("master", "", "Address of the member's API server; overrides the one in --kubeconfig.")
	logger := componentmain.Setup(componentmain.Options{MemoryLimit: true})
	if err := opts.Validate(); err != nil {
		componentmain.InvalidFlag(logger, err)
	}
	cfg, err := memberConfig(*master)
	if err != nil {
		componentmain.InvalidFlag(logger, fmt.Errorf("member kubeconfig: %w", err))
	}
	if err := app.Run(ctrl.SetupSignalHandler(), cfg, opts, logger); err != nil {
		componentmain.Failed(logger, "Scheduler estimator", err)
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
