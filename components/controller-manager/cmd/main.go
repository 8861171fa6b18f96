// Command controller-manager runs Flotilla's controllers against the
// control plane's API server.
package main

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/components/controller-manager/app"
	"github.com/flotilla-io/flotilla/internal/componentmain"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
	logger := componentmain.Setup(componentmain.Options{MemoryLimit: true})
	if err := app.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts, logger); err != nil {
		componentmain.Failed(logger.WithName("setup"), "controller-manager", err)
	}
}
