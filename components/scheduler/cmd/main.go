// Command scheduler is Flotilla's binding scheduler: it places
// ResourceBindings and ClusterResourceBindings whose spec.schedulerName is
// its own onto member clusters.
package main

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/components/scheduler/app"
	"github.com/flotilla-io/flotilla/internal/componentmain"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
	logger := componentmain.Setup(componentmain.Options{MemoryLimit: true})
	if err := app.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts, logger); err != nil {
		componentmain.Failed(logger, "Scheduler", err)
	}
}
