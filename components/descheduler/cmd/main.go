// Command descheduler takes replicas of dynamically weighted Deployments off
// member clusters that cannot schedule them, so the scheduler places them
// elsewhere.
package main

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/components/descheduler/app"
	"github.com/flotilla-io/flotilla/internal/componentmain"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
	logger := componentmain.Setup(componentmain.Options{MemoryLimit: true})
	if err := app.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts, logger); err != nil {
		componentmain.Failed(logger, "Descheduler", err)
	}
}
